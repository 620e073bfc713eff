import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The part of a tap test tempDir needs. */
export interface Teardown {
  teardown(fn: () => unknown): void;
}

/** A fresh directory under base (the OS temp dir by default), removed when the test ends. */
export async function tempDir(
  t: Teardown,
  prefix = 'cert-csi-test-',
  base = tmpdir(),
): Promise<string> {
  const dir = await mkdtemp(join(base, prefix));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A base dir on tmpfs (/dev/shm) when there is one, like the driver's data root; else the OS temp dir. */
export async function tmpfsBase(): Promise<string> {
  const shm = '/dev/shm';
  const ok = await stat(shm).then(
    (s) => s.isDirectory(),
    () => false,
  );
  return ok ? shm : tmpdir();
}
