/**
 * Counts this process's synchronous node:fs calls by name while switched on: the tmpfs flavour of
 * the file operations (src/fs/volatile-fs.ts) makes every call synchronous, so on tmpfs this is
 * the file work of what ran, a figure that, unlike a rate, does not move with the machine's speed.
 */
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';

type Method = ((this: unknown, ...args: unknown[]) => unknown) & { native?: Method };

/** A switch and the counts; installed for the rest of the process (a bench's lifetime). */
export interface FsCallCounter {
  on: boolean;
  /** Calls per name (`openSync`, `realpathSync.native`, …) while on. */
  readonly counts: Map<string, number>;
  /** The sum of counts. */
  total(): number;
}

/** Wraps every `*Sync` function of node:fs (and realpathSync.native) with a counter. */
export function countFsCalls(): FsCallCounter {
  const counter: FsCallCounter = {
    on: false,
    counts: new Map(),
    total: () => [...counter.counts.values()].reduce((sum, n) => sum + n, 0),
  };
  const counting = (name: string, original: Method): Method =>
    function (this: unknown, ...args: unknown[]) {
      if (counter.on) counter.counts.set(name, (counter.counts.get(name) ?? 0) + 1);
      return original.apply(this, args);
    };
  const fsModule = fs as unknown as Record<string, Method>;
  for (const [name, original] of Object.entries(fsModule)) {
    if (!name.endsWith('Sync') || typeof original !== 'function') continue;
    const wrapped = counting(name, original);
    // realpathSync.native is what realpath(3) answers through: kept, and counted on its own.
    if (original.native) wrapped.native = counting(`${name}.native`, original.native);
    fsModule[name] = wrapped;
  }
  // Named imports of node:fs see the wrappers only after this.
  syncBuiltinESMExports();
  return counter;
}
