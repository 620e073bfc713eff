import t from 'tap';
import { runNamespaceScenario } from '../support/mount-namespace.js';
import { scriptBeside } from '../support/project-files.js';

t.test(
  'as root, in a private mount namespace: the data root ends on a tmpfs whatever is mounted there, unless the medium is disk',
  (t) =>
    runNamespaceScenario(t, {
      script: scriptBeside(import.meta.url, './fixtures/data-root-scenario.ts'),
      what: 'data root checks',
      prefix: 'cert-csi-data-root-',
      checks: { exactly: 13 },
      timeoutMs: 120_000,
    }),
);
