import t from 'tap';
import { runNamespaceScenario } from '../support/mount-namespace.js';

t.test('as root, in a private mount namespace: tmpfs, read-only bind mount, modes, cleanup', (t) =>
  runNamespaceScenario(t, {
    script: new URL('./fixtures/bind-mode-plugin.ts', import.meta.url),
    what: 'bind mode checks',
    prefix: 'cert-csi-bind-',
    checks: { atLeast: 15 },
    timeoutMs: 120_000,
  }),
);
