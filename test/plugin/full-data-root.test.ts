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
  'on a full tmpfs data root, a failure metadata.json cannot take is shown by status from memory',
  async (t) => {
    const unavailable = await mountNamespaceUnavailable();
    if (unavailable) {
      t.pass('full data root checks', {
        skip: `skipped: needs root and unshare for a private mount namespace (${unavailable})`,
      });
      return;
    }
    const work = await mkdtemp(join(tmpdir(), 'cert-csi-full-'));
    t.teardown(() => rm(work, { recursive: true, force: true }));
    const script = new URL('./fixtures/full-data-root-plugin.ts', import.meta.url).pathname;
    const { stdout } = await runInMountNamespace(script, [work], 100_000);
    const last = stdout.trim().split('\n').at(-1) ?? '{}';
    const { checks } = JSON.parse(last) as { checks: NamespaceCheck[] };
    t.ok(checks.length >= 7, 'the scenario reported its checks');
    for (const c of checks) t.ok(c.ok, c.name, c.ok ? {} : { detail: c.detail });
  },
);
