import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import {
  mountNamespaceUnavailable,
  type NamespaceCheck,
  runInMountNamespace,
} from '../support/mount-namespace.js';

t.test(
  'as root, in a private mount namespace: tmpfs, read-only bind mount, modes, cleanup',
  async (t) => {
    const unavailable = await mountNamespaceUnavailable();
    if (unavailable) {
      t.pass('bind mode checks', {
        skip: `skipped: needs root and unshare for a private mount namespace (${unavailable})`,
      });
      return;
    }
    const work = await mkdtemp(join(tmpdir(), 'cert-csi-bind-'));
    t.teardown(() => rm(work, { recursive: true, force: true }));
    const script = new URL('./fixtures/bind-mode-plugin.ts', import.meta.url).pathname;
    const { stdout } = await runInMountNamespace(script, [work], 120_000);
    const last = stdout.trim().split('\n').at(-1) ?? '{}';
    const { checks } = JSON.parse(last) as { checks: NamespaceCheck[] };
    t.ok(checks.length >= 15, 'the scenario reported its checks');
    for (const c of checks) t.ok(c.ok, c.name, c.ok ? {} : { detail: c.detail });
  },
);
