import { randomBytes } from 'node:crypto';

// 48 random bits drawn once per process, then a counter: as unlikely to collide with a name
// another process (or this one before a restart, with the same pid in a container) left
// behind as a fresh random suffix, without asking the CSPRNG for every temporary name.
const processPart = randomBytes(6).toString('hex');
let counter = 0;

/** A suffix no other call in any process is expected to return: hex digits only. */
export function uniqueSuffix(): string {
  counter++;
  return `${processPart}${counter.toString(16)}`;
}
