import t from 'tap';
import { runNamespaceScenario } from '../support/mount-namespace.js';

t.test(
  'on a full tmpfs data root, a failure metadata.json cannot take is shown by status from memory',
  (t) =>
    runNamespaceScenario(t, {
      script: new URL('./fixtures/full-data-root-plugin.ts', import.meta.url),
      what: 'full data root checks',
      prefix: 'cert-csi-full-',
      checks: { atLeast: 7 },
      timeoutMs: 100_000,
    }),
);
