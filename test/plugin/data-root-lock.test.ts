import t from 'tap';
import { runNamespaceScenario } from '../support/mount-namespace.js';
import { scriptBeside } from '../support/project-files.js';

// Issue 9, class 6, in bind mode: the data root becomes a tmpfs at start, which hides the lock file
// of the dir underneath; two instances must still contend for one lock, and the loser must never
// mount a second tmpfs over the first.
t.test(
  'as root, in a private mount namespace: one claim per data root around the tmpfs mount',
  (t) =>
    runNamespaceScenario(t, {
      script: scriptBeside(import.meta.url, './fixtures/data-root-lock-scenario.ts'),
      what: 'data root lock checks',
      prefix: 'cert-csi-lock-',
      checks: { exactly: 6 },
      timeoutMs: 90_000,
    }),
);
