import type { ErrorKind } from '../../base/error-catalogue.js';
import { byteSizeText } from '../../fs/regular-file.js';

// Written here rather than taken from split2 or node:readline: neither bounds a line in bytes
// before decoding it (readline not at all), and this is all the control channel needs.

/** A line that grew past its cap before its newline came. */
export class LineTooLongError extends Error {
  override readonly name = 'LineTooLongError';

  constructor(readonly maxBytes: number) {
    super(`a line is longer than ${byteSizeText(maxBytes)}, the most read for one`);
  }

  get errorKind(): ErrorKind {
    return 'CERT_CSI_CONTROL_LINE_TOO_LONG';
  }
}

/**
 * Cuts a byte stream into newline-terminated lines, holding at most maxBytes of a line whose
 * newline has not come yet.
 */
export class LineBuffer {
  private held: Buffer[] = [];
  private heldBytes = 0;

  constructor(private readonly maxBytes: number) {}

  /**
   * The lines chunk completes (UTF-8, without their newline); what follows the last newline is
   * held. Throws LineTooLongError when a line passes maxBytes.
   */
  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (let end = chunk.indexOf(0x0a); end !== -1; end = chunk.indexOf(0x0a, start)) {
      this.hold(chunk.subarray(start, end));
      lines.push(Buffer.concat(this.held, this.heldBytes).toString('utf8'));
      this.held = [];
      this.heldBytes = 0;
      start = end + 1;
    }
    // Copied: a slice would keep the whole chunk the socket read alive.
    if (start < chunk.length) this.hold(Buffer.from(chunk.subarray(start)));
    return lines;
  }

  /** True while part of a line is held. */
  get partial(): boolean {
    return this.heldBytes > 0;
  }

  private hold(part: Buffer): void {
    if (this.heldBytes + part.length > this.maxBytes) throw new LineTooLongError(this.maxBytes);
    this.held.push(part);
    this.heldBytes += part.length;
  }
}
