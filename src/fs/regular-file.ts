import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { ECHO_LIMIT } from '../api/echoed-value.js';
import type { ErrorKind } from '../base/error-catalogue.js';
import { errnoCode, FsError } from './errors.js';

// Why every file another party may have placed is opened this way: open(2) of a FIFO without
// a writer (or of some devices) blocks. Through fs/promises the blocked open parks one of
// libuv's four thread-pool threads for good; four such files and every later file operation of
// the process (a publish, the shutdown on SIGTERM) waits behind them. Synchronously, it blocks
// the main thread itself. O_NONBLOCK makes such an open return at once, fstat on the open
// descriptor then tells what it is without a race with a rename, and O_NOFOLLOW keeps a
// planted symlink from leading a read out of the directory.

/** How readRegularFile reads. */
export interface RegularFileOptions {
  /** The largest file read; a larger one is refused with RefusedFileError. */
  maxBytes: number;
  /**
   * Follow a symlink at the last path component (the files of a ConfigMap mount are links);
   * a link is refused by default.
   */
  followSymlinks?: boolean;
  /**
   * A first read that returns exactly the size fstat gave, less than it was asked for, is the
   * end of the file: no read of one more byte to see the end. True only where a short read of a
   * regular file means its end (tmpfs, read from the page cache); a network filesystem may
   * return less before the end.
   */
  shortReadEnds?: boolean;
}

/** A file's content with the fstat of the descriptor it was read through. */
export interface StatedContent {
  content: Buffer;
  stats: Stats;
}

/** A file refused by readRegularFile: not a regular file, or larger than the cap. */
export class RefusedFileError extends FsError {
  override readonly name: string = 'RefusedFileError';
  /** The file concerned. */
  declare readonly path: string;

  constructor(
    path: string,
    /** What is wrong, without the path: for callers whose message names the file already. */
    readonly problem: string,
  ) {
    super(`file ${pathText(path)} ${problem}`, { path });
  }

  override get errorKind(): ErrorKind {
    return 'CERT_CSI_FILE_REFUSED';
  }
}

/** n bytes for a message: `4 KiB`, `1 MiB`, or bytes when not a whole number of either. */
export function byteSizeText(n: number): string {
  if (n >= 1 << 20 && n % (1 << 20) === 0) return `${n / (1 << 20)} MiB`;
  if (n >= 1 << 10 && n % (1 << 10) === 0) return `${n / (1 << 10)} KiB`;
  return `${n} bytes`;
}

/**
 * The content of path when it is a regular file of at most maxBytes; RefusedFileError when it
 * is something else (FIFO, socket, device, directory; a symlink unless followSymlinks) or
 * larger. Never blocks on what it finds and never reads more than maxBytes + 1 bytes. Other
 * errors (ENOENT, EACCES) are open(2)'s own.
 */
export async function readRegularFile(path: string, options: RegularFileOptions): Promise<Buffer> {
  return (await readRegularFileWithStats(path, options)).content;
}

/** readRegularFile with the fstat of the file read (mode, owner, size): no lstat needed beside it. */
export async function readRegularFileWithStats(
  path: string,
  options: RegularFileOptions,
): Promise<StatedContent> {
  let handle: FileHandle;
  try {
    handle = await open(path, openFlags(options));
  } catch (err) {
    throw openRefusal(path, err, options);
  }
  try {
    const stats = await handle.stat();
    const reader = new CappedRead(path, options, stats);
    for (let buffer = reader.next(); buffer; buffer = reader.next()) {
      reader.took(buffer, (await handle.read(buffer, 0, buffer.length, null)).bytesRead);
    }
    return { content: reader.content(), stats };
  } finally {
    await handle.close();
  }
}

/** readRegularFile with synchronous calls: for tmpfs (see volatile-fs.ts), never blocking either. */
export function readRegularFileSync(path: string, options: RegularFileOptions): Buffer {
  return readRegularFileWithStatsSync(path, options).content;
}

/** readRegularFileWithStats with synchronous calls. */
export function readRegularFileWithStatsSync(
  path: string,
  options: RegularFileOptions,
): StatedContent {
  let fd: number;
  try {
    fd = openSync(path, openFlags(options));
  } catch (err) {
    throw openRefusal(path, err, options);
  }
  try {
    const stats = fstatSync(fd);
    const reader = new CappedRead(path, options, stats);
    for (let buffer = reader.next(); buffer; buffer = reader.next()) {
      reader.took(buffer, readSync(fd, buffer, 0, buffer.length, null));
    }
    return { content: reader.content(), stats };
  } finally {
    closeSync(fd);
  }
}

function openFlags(options: RegularFileOptions): number {
  const follow = options.followSymlinks ? 0 : constants.O_NOFOLLOW;
  return constants.O_RDONLY | constants.O_NONBLOCK | follow;
}

// The refusal for what open(2) itself turned down, or its own error.
function openRefusal(path: string, err: unknown, options: RegularFileOptions): unknown {
  const code = errnoCode(err);
  // O_NOFOLLOW makes a link at the last component ELOOP; followed, ELOOP is a loop of links.
  if (code === 'ELOOP') {
    return notRegular(
      path,
      options.followSymlinks ? 'a loop of symbolic links' : 'a symbolic link',
    );
  }
  // open(2) of a unix socket.
  if (code === 'ENXIO') return notRegular(path, 'a socket');
  return err;
}

function notRegular(path: string, what: string): RefusedFileError {
  return new RefusedFileError(
    path,
    `is not a regular file but ${what}: only regular files are read`,
  );
}

// A socket never gets this far: its open fails (ENXIO, above).
function kindOf(stats: Stats): string {
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isDirectory()) return 'a directory';
  return 'a device';
}

/** One read of at most maxBytes: the buffers to fill, and the refusal once it has too much. */
class CappedRead {
  private readonly chunks: Buffer[] = [];
  private total = 0;
  private ended = false;
  private nextLength: number;
  private readonly maxBytes: number;
  // The size to take a short first read of as the end (shortReadEnds); -1: none.
  private readonly endAt: number;

  constructor(
    private readonly path: string,
    options: RegularFileOptions,
    stats: Stats,
  ) {
    this.maxBytes = options.maxBytes;
    if (!stats.isFile()) throw notRegular(path, kindOf(stats));
    if (stats.size > this.maxBytes) throw this.tooLarge();
    this.endAt = options.shortReadEnds ? stats.size : -1;
    // One byte more than the file has: a file that grew since fstat shows in the first read.
    this.nextLength = stats.size + 1;
  }

  /** The buffer for the next read; undefined at the end of the file. */
  next(): Buffer | undefined {
    if (this.ended) return undefined;
    return Buffer.allocUnsafe(Math.min(this.nextLength, this.maxBytes + 1 - this.total));
  }

  /** Records a read into a buffer next() gave; refuses once more than maxBytes came. */
  took(buffer: Buffer, bytesRead: number): void {
    if (bytesRead === 0) {
      this.ended = true;
      return;
    }
    this.chunks.push(buffer.subarray(0, bytesRead));
    this.total += bytesRead;
    if (this.total > this.maxBytes) throw this.tooLarge();
    if (this.total === this.endAt && bytesRead < buffer.length) {
      this.ended = true;
      return;
    }
    // A short read is the end of a file that did not grow: one byte is enough to see that,
    // where a 64 KiB buffer for it cost an allocation per file read.
    this.nextLength = bytesRead < buffer.length ? 1 : 64 * 1024;
  }

  content(): Buffer {
    // The usual single read is returned as it is, not copied.
    const [only] = this.chunks;
    if (only && this.chunks.length === 1) return only;
    return Buffer.concat(this.chunks, this.total);
  }

  private tooLarge(): RefusedFileError {
    return new RefusedFileError(
      this.path,
      `is larger than ${byteSizeText(this.maxBytes)}, the most read for it: not read`,
    );
  }
}

// The path JSON-quoted (a planted name may hold a newline), its tail kept when long: the file
// name says more than the directories leading to it.
function pathText(path: string): string {
  const chars = [...path];
  if (chars.length <= ECHO_LIMIT) return JSON.stringify(path);
  return `…${JSON.stringify(chars.slice(-ECHO_LIMIT).join(''))}(${chars.length} characters)`;
}
