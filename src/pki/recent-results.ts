import { LRUCache } from 'lru-cache';

/**
 * The last few results of a pure function of a string, by that exact string, least recently
 * used evicted first (lru-cache). For work done on the same input by several readers in a row
 * (a CSR parsed and verified by admission, then by the signer; a Secret's key decoded by each
 * Certificate controller): the second reader gets the first's result. Inputs longer than
 * maxKeyLength are never held, so the memory stays bounded by maxEntries × maxKeyLength plus
 * the results.
 */
export class RecentResults<V extends {}> {
  private readonly entries: LRUCache<string, V> | undefined;

  constructor(
    maxEntries: number,
    private readonly maxKeyLength: number,
  ) {
    this.entries = maxEntries > 0 ? new LRUCache({ max: maxEntries }) : undefined;
  }

  /** How many results are held. */
  get size(): number {
    return this.entries?.size ?? 0;
  }

  /** compute(key)'s result, held from an earlier call when there was one; a throw is not held. */
  get(key: string, compute: (key: string) => V): V {
    const held = this.entries?.get(key);
    if (held !== undefined) return held;
    const value = compute(key);
    this.set(key, value);
    return value;
  }

  /** Holds value for key (unless key is too long), as get would after computing it. */
  set(key: string, value: V): void {
    if (key.length > this.maxKeyLength) return;
    this.entries?.set(key, value);
  }

  /** The result held for key, if any (without computing one). */
  peek(key: string): V | undefined {
    return this.entries?.get(key);
  }

  /** True when a result for key is held (without making it the most recently used). */
  has(key: string): boolean {
    return this.entries?.has(key) ?? false;
  }

  /** Forgets every result. */
  clear(): void {
    this.entries?.clear();
  }
}
