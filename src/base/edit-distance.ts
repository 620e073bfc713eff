// Written here rather than taken from a library: base depends on nothing, and the whole of it is
// one short loop over two words no longer than a flag or an attribute name.

/** The Levenshtein distance of a and b: the fewest single-character edits turning one into the other. */
export function editDistance(a: string, b: string): number {
  // Every index read below is within its row (0..b.length): the casts only tell TypeScript so.
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      const deletion = (previous[j] as number) + 1;
      const insertion = (current[j - 1] as number) + 1;
      current.push(Math.min(deletion, insertion, substitution));
    }
    previous = current;
  }
  return previous[b.length] as number;
}

/** The most edits a word may be away from a name for that name to be what it meant. */
const MAX_SUGGESTION_DISTANCE = 2;

/**
 * The candidate word most likely meant, for a "did you mean": the nearest by edit distance
 * (the first listed among equals), when it is at most two edits away and fewer edits than the
 * word has characters (so that `x` does not suggest `h`); undefined when none is that near.
 */
export function closestMatch(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.min(MAX_SUGGESTION_DISTANCE, word.length - 1) + 1;
  for (const candidate of candidates) {
    // The lengths alone rule it out: never a quadratic walk over a long word (a user's value).
    if (Math.abs(candidate.length - word.length) >= bestDistance) continue;
    const distance = editDistance(word, candidate);
    if (distance > 0 && distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** ` (did you mean NAME?)` for the nearest candidate, or '' when none is near enough. */
export function didYouMean(
  word: string,
  candidates: Iterable<string>,
  show: (name: string) => string = (name) => name,
): string {
  const match = closestMatch(word, candidates);
  return match === undefined ? '' : ` (did you mean ${show(match)}?)`;
}
