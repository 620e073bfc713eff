import t from 'tap';
import { MemoryStore } from '../../src/store/memory-store.js';
import { runConformance } from './conformance/cases.js';

// The ResourceStore conformance cases against the in-process memory backend.
runConformance(t, {
  async open(t, options = {}) {
    const store = new MemoryStore(options);
    t.teardown(() => store.close());
    return store;
  },
});
