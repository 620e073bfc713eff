import { readFileSync } from 'node:fs';

/** The mask in the `Umask:` line of a /proc/<pid>/status text (Linux 4.7 on); undefined without. */
export function parseStatusUmask(status: string): number | undefined {
  const match = /^Umask:\s*([0-7]{1,4})$/m.exec(status);
  return match?.[1] === undefined ? undefined : Number.parseInt(match[1], 8);
}

/**
 * True when open(2) or mkdir(2) with mode, filtered by umask, gives mode exactly: no bit of it
 * masked, and no bit above the permission bits (those need an explicit chmod). An unknown
 * umask never does.
 */
export function umaskKeeps(mode: number, umask: number | undefined): boolean {
  return umask !== undefined && (mode & ~0o777) === 0 && (mode & umask) === 0;
}

// null: not read yet.
let known: number | undefined | null = null;

/**
 * This process's umask, read once from /proc/self/status; undefined where that cannot be read.
 * Not process.umask(): without an argument it sets the mask twice to read it (DEP0139), a race
 * with any thread creating a file meanwhile. Nothing in this process changes its umask; one that
 * did would leave the remembered value stale, and a stale value can only make a created file's
 * mode narrower than asked for, never wider (a bit of the mode the kernel never adds).
 */
export function processUmask(): number | undefined {
  if (known === null) {
    try {
      known = parseStatusUmask(readFileSync('/proc/self/status', 'latin1'));
    } catch {
      known = undefined;
    }
  }
  return known;
}
