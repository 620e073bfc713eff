import { readFile } from 'node:fs/promises';
import t from 'tap';
import {
  mountNamespaceUnavailable,
  type NamespaceCheck,
  runInMountNamespace,
} from '../support/mount-namespace.js';
import { scriptBeside } from '../support/project-files.js';
import { tempDir } from '../support/temp-dir.js';

const SCRIPT = scriptBeside(import.meta.url, './fixtures/bind-mount-scenario.ts');

t.test('bind mode: tmpfs, read-only bind mounts, fsGroup, unpublish', async (t) => {
  const unavailable = await mountNamespaceUnavailable();
  if (unavailable !== undefined) {
    t.pass('bind mount checks', {
      skip: `skipped: needs root and unshare for a private mount namespace (${unavailable})`,
    });
    return;
  }
  const work = await tempDir(t, 'cert-csi-mount-');
  const { stdout, stderr } = await runInMountNamespace(SCRIPT, [work]);
  const last = stdout.trim().split('\n').at(-1) ?? '';
  let checks: NamespaceCheck[] = [];
  try {
    checks = (JSON.parse(last) as { checks: NamespaceCheck[] }).checks;
  } catch {
    t.fail('the namespace script printed its result', { stdout, stderr });
    return;
  }
  t.ok(checks.length >= 30, `the script reported ${checks.length} checks`);
  for (const c of checks) t.ok(c.ok, c.name, c.ok ? {} : { detail: c.detail });
  const hostMounts = await readFile('/proc/self/mountinfo', 'utf8');
  t.notMatch(hostMounts, work, 'no mount leaked into the host namespace');
});
