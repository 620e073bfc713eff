import t from 'tap';
import { runNamespaceScenario } from '../support/mount-namespace.js';
import { scriptBeside } from '../support/project-files.js';

t.test('as root, in a private mount namespace: tmpfs, read-only bind mount, modes, cleanup', (t) =>
  runNamespaceScenario(t, {
    script: scriptBeside(import.meta.url, './fixtures/bind-mode-plugin.ts'),
    what: 'bind mode checks',
    prefix: 'cert-csi-bind-',
    checks: { atLeast: 15 },
    timeoutMs: 120_000,
  }),
);
