import t from 'tap';
import { MemoryStore } from '../../src/store/memory-store.js';
import { StateDirectory } from '../../src/store/state-directory/state-directory.js';
import { tempDir } from '../support/temp-dir.js';
import { runConformance } from './conformance/cases.js';

// The ResourceStore conformance cases against the memory backend persisting to a state
// directory, as the embedded mode runs it: every write waits for its file.
runConformance(t, {
  async open(t, options = {}) {
    const dir = await tempDir(t, 'cert-csi-conformance-');
    const store = await MemoryStore.open({ ...options, persistence: new StateDirectory(dir) });
    t.teardown(() => store.close());
    return store;
  },
});
