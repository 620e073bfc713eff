import { execFileSync } from 'node:child_process';
import { mkdir, rename, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { type Teardown, tempDir } from './temp-dir.js';

/**
 * Entries that are not regular files, as another party may leave them where the plugin or the
 * CLI reads: a FIFO without a writer (an open of it blocks), a symlink to one, a unix socket, a
 * directory, and a symlink to a regular file outside the directory read.
 */
export const ODD_KINDS = ['fifo', 'link-to-fifo', 'socket', 'directory', 'link-to-file'] as const;
export type OddKind = (typeof ODD_KINDS)[number];

/**
 * Makes odd entries; the targets of its links live in a temp dir of their own. Each call
 * resolves the link's target, if it made a link.
 */
export async function oddFileMaker(
  t: Teardown,
  /** Where the targets go (the OS temp dir by default): the filesystem of the odd entries, as a socket is moved into place. */
  base?: string,
): Promise<(path: string, kind: OddKind, content?: string) => Promise<string | undefined>> {
  const outside = await tempDir(t, 'cert-csi-odd-targets-', base);
  let count = 0;
  return async (path, kind, content = '{}\n') => {
    const target = join(outside, `target-${++count}`);
    switch (kind) {
      case 'fifo':
        // Node has no mkfifo.
        execFileSync('mkfifo', [path]);
        return undefined;
      case 'link-to-fifo':
        execFileSync('mkfifo', [target]);
        await symlink(target, path);
        return target;
      case 'socket':
        await makeSocketFile(path, `${target}.sock`);
        return undefined;
      case 'directory':
        await mkdir(path);
        return undefined;
      case 'link-to-file':
        // A readable file with the content a reader would take: only following the link finds it.
        await writeFile(target, content);
        await symlink(target, path);
        return target;
    }
  };
}

// A socket file nobody listens on: bound under a short temporary name (a socket's path has at
// most 107 bytes; the server's close unlinks it) and renamed into place.
async function makeSocketFile(path: string, bindPath: string): Promise<void> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(bindPath, resolve);
  });
  await rename(bindPath, path);
  await new Promise((resolve) => server.close(resolve));
}
