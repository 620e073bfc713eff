import { readFile } from 'node:fs/promises';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { errnoCode } from '../../src/fs/errors.js';

/** What a reader of CA files saw while they were rewritten. */
export interface CaFileReads {
  /** Successful reads. */
  reads: number;
  /** Every distinct content read. */
  contents: Set<string>;
  /** Opens that found no file (a generation removed while the path was being resolved). */
  missing: number;
}

/**
 * Reads the files again and again, as an application polling its CA file would, until
 * stopped; never fails on its own: the test judges what it saw.
 */
export function readContinuously(paths: readonly string[]): { stop(): Promise<CaFileReads> } {
  const seen: CaFileReads = { reads: 0, contents: new Set(), missing: 0 };
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      for (const path of paths) {
        try {
          seen.contents.add(await readFile(path, 'utf8'));
          seen.reads++;
        } catch (err) {
          if (errnoCode(err) !== 'ENOENT') throw err;
          seen.missing++;
        }
      }
      await yieldToLoop();
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return seen;
    },
  };
}
