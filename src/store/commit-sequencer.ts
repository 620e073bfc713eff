/**
 * Hands out resourceVersions and lets changes take effect strictly in that order, even
 * when the durable writes behind them finish out of order.
 */
export class CommitSequencer {
  private last: number;
  private readonly open: Array<{ rv: number; finished: boolean; turn?: () => void }> = [];

  constructor(lastRv = 0) {
    this.last = lastRv;
  }

  /** Takes the next resourceVersion; the caller must finish() it. */
  begin(): number {
    this.last++;
    this.open.push({ rv: this.last, finished: false });
    return this.last;
  }

  /** True when every earlier resourceVersion has finished. */
  isTurn(rv: number): boolean {
    return this.open[0]?.rv === rv;
  }

  /** Resolves once every earlier resourceVersion has finished. */
  async waitTurn(rv: number): Promise<void> {
    const entry = this.open.find((candidate) => candidate.rv === rv);
    if (!entry || this.isTurn(rv)) return;
    await new Promise<void>((resolve) => {
      entry.turn = resolve;
    });
  }

  /** Marks rv done (committed or abandoned) and wakes the next in line. */
  finish(rv: number): void {
    const entry = this.open.find((candidate) => candidate.rv === rv);
    if (entry) entry.finished = true;
    while (this.open[0]?.finished) this.open.shift();
    this.open[0]?.turn?.();
  }
}
