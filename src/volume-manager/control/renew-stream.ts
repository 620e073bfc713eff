import { type AnswerLine, formatAnswerLine } from './control-answers.js';
import type { RenewOutcome } from './control-protocol.js';

/** Where answer lines go: a socket, or a test's sink. */
export interface AnswerSink {
  /** Bytes written and not yet taken by the peer. */
  readonly writableLength: number;
  write(line: string): unknown;
  once(event: 'drain', listener: () => void): unknown;
}

/**
 * Streams a renewal's volumes to the client as they finish: one line per volume, each once.
 * While more than highWaterBytes wait unsent in the sink (a client that does not read), no line
 * is added: the rest follows on 'drain'. A connection so holds at most about highWaterBytes
 * and the outcome (which the handler holds anyway), however many volumes there are.
 */
export class RenewStream {
  private readonly sent = new Set<string>();
  private latest: RenewOutcome = { renewed: [], failed: [] };
  // Entries of latest already looked at: the outcome so far grows, so each is looked at once.
  private renewedSeen = 0;
  private failedSeen = 0;
  private waitingForDrain = false;
  // Told once everything of the final outcome is written.
  private finished: (() => void) | undefined;

  constructor(
    private readonly sink: AnswerSink,
    private readonly highWaterBytes: number,
  ) {}

  /** The handler's progress callback: the outcome so far (the same object may grow). */
  readonly update = (soFar: RenewOutcome): void => {
    this.take(soFar);
    if (!this.waitingForDrain) this.flush();
  };

  /**
   * Writes every volume of the final outcome not written yet, at the pace the sink takes them;
   * resolves once all are written (never, for a client that stops reading: the connection's
   * deadline ends that).
   */
  finish(outcome: RenewOutcome): Promise<void> {
    this.take(outcome);
    return new Promise((resolve) => {
      this.finished = resolve;
      if (!this.waitingForDrain) this.flush();
    });
  }

  private take(outcome: RenewOutcome): void {
    if (outcome === this.latest) return;
    // Another object: look at all of it; what was written already is skipped by its key.
    this.latest = outcome;
    this.renewedSeen = 0;
    this.failedSeen = 0;
  }

  private flush(): void {
    for (let next = this.next(); next; next = this.next()) {
      if (this.sink.writableLength > this.highWaterBytes) {
        this.waitingForDrain = true;
        this.sink.once('drain', () => {
          this.waitingForDrain = false;
          this.flush();
        });
        return;
      }
      if (next.line.type === 'renewed') this.renewedSeen++;
      else this.failedSeen++;
      if (this.sent.has(next.key)) continue;
      this.sent.add(next.key);
      this.sink.write(formatAnswerLine(next.line));
    }
    this.finished?.();
  }

  // The first entry of latest not looked at yet, as its line and its key.
  private next(): { line: AnswerLine; key: string } | undefined {
    const renewed = this.latest.renewed[this.renewedSeen];
    if (renewed) return { line: { ...renewed, type: 'renewed' }, key: `r:${renewed.volumeId}` };
    const failed = this.latest.failed[this.failedSeen];
    if (failed) return { line: { ...failed, type: 'failed' }, key: `f:${failed.volumeId}` };
    return undefined;
  }
}
