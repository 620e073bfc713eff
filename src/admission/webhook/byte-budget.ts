/**
 * A number of bytes shared by requests in flight: each takes what it buffers and gives it back
 * once answered; a take that does not fit is refused whole, so the total never passes the
 * capacity.
 */
export class ByteBudget {
  private used = 0;

  constructor(readonly capacity: number) {}

  /** Takes n bytes when they fit (true); else takes nothing (false). */
  take(n: number): boolean {
    if (this.used + n > this.capacity) return false;
    this.used += n;
    return true;
  }

  /** Gives back n bytes taken before. */
  give(n: number): void {
    this.used -= n;
  }

  /** The bytes taken and not yet given back. */
  get inUse(): number {
    return this.used;
  }
}
