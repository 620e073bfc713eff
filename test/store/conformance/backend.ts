import type { Test } from 'tap';
import type { ResourceStore } from '../../../src/store/resource-store.js';

/** What a case may ask of a fresh store. */
export interface BackendOptions {
  /** How many changes a watch can resume from before it is Gone (the watch cache's window). */
  historySize?: number;
}

/** Makes fresh, empty stores of one backend for the conformance cases. */
export interface StoreBackend {
  /** A fresh, empty store; whatever it holds (servers, files) is released when t ends. */
  open(t: Test, options?: BackendOptions): Promise<ResourceStore>;
}
