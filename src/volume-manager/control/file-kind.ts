import type { Stats } from 'node:fs';

/** What an lstat found, for a message: `a FIFO`, `a symbolic link`, `a regular file`... */
export function fileKind(stats: Stats): string {
  if (stats.isFile()) return 'a regular file';
  if (stats.isDirectory()) return 'a directory';
  if (stats.isSymbolicLink()) return 'a symbolic link';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isSocket()) return 'a socket';
  return 'a device';
}
