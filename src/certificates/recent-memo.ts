/**
 * A memo of the most recently used values, at most `capacity` of them: the least recently used
 * is forgotten first. For values keyed by content (PEM text), where no object's lifetime
 * bounds the entry as a WeakMap's would.
 */
export class RecentMemo<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(private readonly capacity: number) {}

  /** The value remembered for key, computed and remembered when there is none. */
  get(key: K, compute: (key: K) => V): V {
    const entries = this.entries;
    if (entries.has(key)) {
      const value = entries.get(key) as V;
      // Map keeps insertion order: re-inserting makes it the most recent.
      entries.delete(key);
      entries.set(key, value);
      return value;
    }
    const value = compute(key);
    this.set(key, value);
    return value;
  }

  /** Remembers value for key, as the most recent. */
  set(key: K, value: V): void {
    const entries = this.entries;
    entries.delete(key);
    entries.set(key, value);
    if (entries.size > this.capacity) {
      const oldest = entries.keys().next();
      if (!oldest.done) entries.delete(oldest.value);
    }
  }

  /** How many values are remembered. */
  get size(): number {
    return this.entries.size;
  }
}
