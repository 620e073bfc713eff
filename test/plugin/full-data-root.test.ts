import t from 'tap';
import { runNamespaceScenario } from '../support/mount-namespace.js';
import { scriptBeside } from '../support/project-files.js';

t.test(
  'on a full tmpfs data root, renew is answered and status shows from memory a failure metadata.json cannot take',
  (t) =>
    runNamespaceScenario(t, {
      script: scriptBeside(import.meta.url, './fixtures/full-data-root-plugin.ts'),
      what: 'full data root checks',
      prefix: 'cert-csi-full-',
      checks: { atLeast: 7 },
      timeoutMs: 100_000,
    }),
);
