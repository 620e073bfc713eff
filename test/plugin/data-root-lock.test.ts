import t from 'tap';
import {
  mountNamespaceUnavailable,
  type NamespaceCheck,
  runInMountNamespace,
} from '../support/mount-namespace.js';
import { tempDir } from '../support/temp-dir.js';

// Issue 9, class 6, in bind mode: the data root becomes a tmpfs at start, which hides the lock file
// of the dir underneath; two instances must still contend for one lock, and the loser must never
// mount a second tmpfs over the first.
t.test(
  'as root, in a private mount namespace: one claim per data root around the tmpfs mount',
  async (t) => {
    const unavailable = await mountNamespaceUnavailable();
    if (unavailable) {
      t.pass('data root lock checks', {
        skip: `skipped: needs root and unshare for a private mount namespace (${unavailable})`,
      });
      return;
    }
    const work = await tempDir(t, 'cert-csi-lock-');
    const script = new URL('./fixtures/data-root-lock-scenario.ts', import.meta.url).pathname;
    const { stdout } = await runInMountNamespace(script, [work], 90_000);
    const { checks } = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as {
      checks: NamespaceCheck[];
    };
    t.equal(checks.length, 6, 'the scenario reported its checks');
    for (const c of checks) t.ok(c.ok, c.name, c.ok ? {} : { detail: c.detail });
  },
);
