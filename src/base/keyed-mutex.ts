/** Per-key mutual exclusion: holders of the same key run one at a time, in arrival order. */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  /** Resolves with a release function once every earlier holder of key has released it. */
  async lock(key: string): Promise<() => void> {
    const previous = this.tails.get(key);
    let release: (() => void) | undefined;
    const current = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous ? previous.then(() => current) : current;
    this.tails.set(key, tail);
    if (previous) await previous;
    return () => {
      release?.();
      // The last holder leaves no entry behind, so the map does not grow with every key.
      if (this.tails.get(key) === tail) this.tails.delete(key);
    };
  }
}
