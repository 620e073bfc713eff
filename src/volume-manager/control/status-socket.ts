import { lstat, unlink } from 'node:fs/promises';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import type { Logger } from '../../api/logger.js';
import { errorMessage } from '../../base/error-message.js';
import { errnoCode } from '../../fs/errors.js';
import type { DataRoot } from '../../volume/data-root.js';
import type { VolumeFailure } from '../../volume/metadata.js';

// `cert-csi status` reads metadata.json. A failure the plugin could not save there (a full
// data root: ENOSPC) lives only in the plugin's memory, and a full disk takes no request
// file either; so the running plugin answers on a unix socket in the data root, which needs
// no free space: each connection gets one JSON line, then the plugin closes it.

/** Name of the socket in the data root; `..`-prefixed, so it is never taken for a volume. */
export const STATUS_SOCKET_NAME = '..status.sock';

/** A failure the plugin holds in memory because it could not write it to metadata.json. */
export interface UnsavedFailure {
  volumeId: string;
  lastError: VolumeFailure;
  /** Why metadata.json could not be written. */
  saveError: string;
}

/** How long `cert-csi status` waits for the plugin's answer before showing the files alone. */
export const STATUS_ANSWER_TIMEOUT_MS = 2000;

/** `<data-root>/..status.sock`. */
export function statusSocketOf(dataRoot: DataRoot): string {
  return join(dataRoot.root, STATUS_SOCKET_NAME);
}

/**
 * Serves the failures only held in memory on the data root's status socket. A socket left by
 * an earlier run is replaced; anything else at that path is left alone and nothing is served.
 */
export async function serveUnsavedFailures(
  dataRoot: DataRoot,
  failures: () => UnsavedFailure[],
  logger: Logger,
): Promise<{ close(): Promise<void> }> {
  const path = statusSocketOf(dataRoot);
  const none = { close: async () => {} };
  try {
    if (!(await lstat(path)).isSocket()) {
      logger.warn({ path }, 'not a socket: unsaved failures are not served to cert-csi status');
      return none;
    }
    await unlink(path);
  } catch (err) {
    if (errnoCode(err) !== 'ENOENT') {
      logger.warn({ path, err: errorMessage(err) }, 'cannot replace the status socket');
      return none;
    }
  }
  const server: Server = createServer((socket) => {
    socket.on('error', () => socket.destroy());
    socket.end(`${JSON.stringify(failures())}\n`);
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => resolve());
    });
  } catch (err) {
    logger.warn(
      { path, err: errorMessage(err) },
      'cannot serve unsaved failures to cert-csi status',
    );
    return none;
  }
  // Not keeping a stopping plugin alive is the CSI server's and the manager's business.
  server.unref();
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
      }),
  };
}

/**
 * The largest answer read from the socket: a failure per volume, each with its messages. A
 * larger one is dropped like a malformed one (status shows the files alone).
 */
export const UNSAVED_FAILURES_MAX_BYTES = 16 * 1024 * 1024;

/**
 * The failures a running plugin holds in memory for this data root; empty when no plugin
 * answers within timeoutMs (none runs, or it is stuck): status then shows the files alone.
 * Only a socket at the name is asked (a link to one elsewhere is not), and at most
 * UNSAVED_FAILURES_MAX_BYTES of its answer is held.
 */
export async function readUnsavedFailures(
  dataRoot: DataRoot,
  timeoutMs = STATUS_ANSWER_TIMEOUT_MS,
): Promise<UnsavedFailure[]> {
  const path = statusSocketOf(dataRoot);
  const stats = await lstat(path).catch(() => undefined);
  if (!stats?.isSocket()) return [];
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const socket = connect(path);
    const done = (failures: UnsavedFailure[]) => {
      clearTimeout(deadline);
      socket.destroy();
      resolve(failures);
    };
    const deadline = setTimeout(() => done([]), timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > UNSAVED_FAILURES_MAX_BYTES) done([]);
      else chunks.push(chunk);
    });
    socket.on('error', () => done([]));
    socket.on('end', () => done(parseFailures(Buffer.concat(chunks).toString('utf8'))));
  });
}

// Keeps only well-formed entries: the answer comes from another process.
function parseFailures(text: string): UnsavedFailure[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(value)) return [];
  const out: UnsavedFailure[] = [];
  for (const entry of value as Array<Partial<Record<string, unknown>>>) {
    const error = entry?.lastError as Partial<Record<string, unknown>> | undefined;
    if (
      typeof entry?.volumeId === 'string' &&
      typeof entry.saveError === 'string' &&
      typeof error?.message === 'string' &&
      typeof error.time === 'string'
    ) {
      out.push({
        volumeId: entry.volumeId,
        saveError: entry.saveError,
        lastError: { message: error.message, time: error.time },
      });
    }
  }
  return out;
}
