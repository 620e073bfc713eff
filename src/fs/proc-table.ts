import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { readRegularFile } from './regular-file.js';

/** One process of a /proc tree: its pid, its parent's, and its cgroup file's text. */
export interface ProcEntry {
  pid: number;
  ppid: number;
  cgroup: string;
}

// A cgroup file is a line per hierarchy (about a dozen); stat is one line.
const PROC_FILE_MAX_BYTES = 64 * 1024;

/**
 * The processes under procRoot (`/proc`, or a test's tree of the same shape) with their
 * parent and cgroup; a process that ends while it is read is left out.
 */
export async function readProcTable(procRoot: string): Promise<ProcEntry[]> {
  const entries: ProcEntry[] = [];
  for (const name of await readdir(procRoot)) {
    if (!/^[1-9][0-9]*$/.test(name)) continue;
    try {
      const read = async (file: string) =>
        (
          await readRegularFile(join(procRoot, name, file), { maxBytes: PROC_FILE_MAX_BYTES })
        ).toString('utf8');
      const stat = await read('stat');
      // `pid (comm) state ppid ...`: comm may hold spaces and parentheses, so read after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      entries.push({ pid: Number(name), ppid, cgroup: await read('cgroup') });
    } catch {
      // Gone (ENOENT, ESRCH) or unreadable: not a process that can be signalled.
    }
  }
  return entries;
}
