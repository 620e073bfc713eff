export { writeFileAtomic } from './atomic-file.js';
export { type Clock, ManualClock, systemClock, type TimerHandle } from './clock.js';
export { isStoreError, StoreError, type StoreErrorReason } from './errors.js';
export { Informer, type InformerHandlers, type InformerOptions } from './informer.js';
export {
  type LabelOperator,
  type LabelRequirement,
  type LabelSelector,
  parseLabelSelector,
} from './label-selector.js';
export { MemoryStore, type MemoryStoreOptions } from './memory-store.js';
export type {
  ListOptions,
  ListResult,
  ResourceStore,
  Watch,
  WatchEvent,
  WatchEventType,
  WatchHandlers,
  WatchOptions,
} from './resource-store.js';
export { isNewerResourceVersion } from './resource-version.js';
export type { CorruptFileHandler } from './state-directory.js';
export { type WorkItem, WorkQueue, type WorkQueueOptions } from './work-queue.js';
