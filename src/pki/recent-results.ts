/**
 * The last few results of a pure function of a string, by that exact string, least recently
 * used evicted first. For work done on the same input by several readers in a row (a CSR
 * parsed and verified by admission, then by the signer): the second reader gets the first's
 * result. Inputs longer than maxKeyLength are never held, so the memory stays bounded by
 * maxEntries × maxKeyLength plus the results.
 */
export class RecentResults<V> {
  private readonly entries = new Map<string, V>();

  constructor(
    private readonly maxEntries: number,
    private readonly maxKeyLength: number,
  ) {}

  /** How many results are held. */
  get size(): number {
    return this.entries.size;
  }

  /** compute(key)'s result, held from an earlier call when there was one; a throw is not held. */
  get(key: string, compute: (key: string) => V): V {
    const held = this.entries.get(key);
    if (held !== undefined) {
      // Map keeps insertion order: re-inserting makes this the most recently used.
      this.entries.delete(key);
      this.entries.set(key, held);
      return held;
    }
    const value = compute(key);
    this.set(key, value);
    return value;
  }

  /** Holds value for key (unless key is too long), as get would after computing it. */
  set(key: string, value: V): void {
    if (key.length > this.maxKeyLength || this.maxEntries <= 0) return;
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(key, value);
  }

  /** True when a result for key is held (without making it the most recently used). */
  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** Forgets every result. */
  clear(): void {
    this.entries.clear();
  }
}
