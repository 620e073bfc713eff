import type { KubeObject } from '../api/meta.js';
import { isNewerResourceVersion } from '../store/resource-version.js';

/**
 * What a controller wrote and its informer has not shown it yet. A key synced again right
 * after a write (another event queued it) would otherwise act on the older cached copy: create
 * an object that exists, or sign a request it just answered. Entries last only until the
 * cache catches up, so the map holds only the writes in flight.
 */
export class RecentWrites<T extends KubeObject> {
  private readonly written = new Map<string, T>();

  /** Remembers the object a write returned. */
  remember(key: string, object: T): void {
    this.written.set(key, object);
  }

  /** Forgets key (a write found it gone). */
  forget(key: string): void {
    this.written.delete(key);
  }

  /** Forgets the write of key when the cache saw that object (same UID) deleted. */
  deleted(key: string, object: T): void {
    if (this.written.get(key)?.metadata.uid === object.metadata.uid) this.written.delete(key);
  }

  /** The newer of the cached copy and the last write; the write is forgotten once the cache has it. */
  latest(key: string, cached: T | undefined): T | undefined {
    const written = this.written.get(key);
    if (!written) return cached;
    if (
      cached &&
      !isNewerResourceVersion(written.metadata.resourceVersion, cached.metadata.resourceVersion)
    ) {
      this.written.delete(key);
      return cached;
    }
    return written;
  }
}
