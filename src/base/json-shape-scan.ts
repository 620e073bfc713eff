// JSON.parse costs the event loop time and the heap memory far beyond the size of some texts:
// a few megabytes of `[[[[…` or of `{},{},…` take seconds and tens of megabytes to parse. This
// scan reads the bytes once, as they arrive, and says when a text nests too deep or holds too
// many containers or entries, so such a body is refused before it is parsed, or even all read.
// It checks no syntax: JSON.parse still does, on what passes. Hand-written: no JSON library
// offers an incremental depth and width check (streaming parsers build what they read).

/** How much structure a JSON text may have. */
export interface JsonShapeLimits {
  /** The deepest nesting of objects and arrays (a top-level object is depth 1). */
  maxDepth: number;
  /** Objects and arrays in the whole text. */
  maxContainers: number;
  /** Members of one object or elements of one array. */
  maxEntries: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/**
 * An incremental scan of a JSON text's structure: feed it the bytes in any chunks; it
 * tracks strings (escapes included, across chunk boundaries) so brackets and commas inside
 * them do not count, and reports the first limit passed. UTF-8 multi-byte sequences never
 * contain these ASCII bytes, so bytes are scanned without decoding.
 */
export class JsonShapeScan {
  private depth = 0;
  private containers = 0;
  private inString = false;
  private escaped = false;
  /** The commas so far at each open depth: an open container's entries are at most one more. */
  private readonly commas: number[] = [];
  private problem: string | undefined;

  constructor(private readonly limits: JsonShapeLimits) {}

  /** Scans the next bytes; what is over a limit (the first one passed, every call after), else undefined. */
  feed(chunk: Uint8Array): string | undefined {
    if (this.problem !== undefined) return this.problem;
    const { maxDepth, maxContainers, maxEntries } = this.limits;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i] as number;
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (byte === BACKSLASH) this.escaped = true;
        else if (byte === QUOTE) this.inString = false;
        continue;
      }
      switch (byte) {
        case QUOTE:
          this.inString = true;
          break;
        case OPEN_OBJECT:
        case OPEN_ARRAY:
          this.depth++;
          this.containers++;
          if (this.depth > maxDepth) return this.fail(`nests deeper than ${maxDepth} levels`);
          if (this.containers > maxContainers)
            return this.fail(`holds more than ${maxContainers} objects and arrays`);
          this.commas[this.depth] = 0;
          break;
        case CLOSE_OBJECT:
        case CLOSE_ARRAY:
          // An unbalanced close is JSON.parse's to refuse; the count stays at the top level.
          if (this.depth > 0) this.depth--;
          break;
        case COMMA: {
          if (this.depth === 0) break;
          const commas = (this.commas[this.depth] as number) + 1;
          this.commas[this.depth] = commas;
          if (commas >= maxEntries)
            return this.fail(`has an object or array of more than ${maxEntries} entries`);
          break;
        }
      }
    }
    return undefined;
  }

  private fail(problem: string): string {
    this.problem = problem;
    return problem;
  }
}
