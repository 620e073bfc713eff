import { chmod, lstat, unlink } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import type { Logger } from '../../api/logger.js';
import { errorMessage } from '../../base/error-message.js';
import { errnoCode } from '../../fs/errors.js';
import type { DataRoot } from '../../volume/data-root.js';
import { formatAnswerLine } from './control-answers.js';
import {
  type ConnectionLimits,
  type ControlHandlers,
  destroySocket,
  serveConnection,
} from './control-connection.js';
import { controlSocketOf } from './control-protocol.js';
import { fileKind } from './file-kind.js';
import { removeLegacyControlFiles } from './legacy-control-files.js';
import { socketAddress } from './socket-address.js';

/** The bounds of the control server: its connections, and each one's (ConnectionLimits). */
export interface ControlLimits extends ConnectionLimits {
  /** Connections served at once; one more is answered "busy" and closed. */
  maxConnections: number;
}

export const DEFAULT_CONTROL_LIMITS: ControlLimits = {
  // Every CLI of the node at once, with room: a request costs a socket and a few timers.
  maxConnections: 64,
  // A request is one line, sent as soon as the connection is up.
  requestDeadlineMs: 10_000,
  flushDeadlineMs: 30_000,
  progressHighWaterBytes: 256 * 1024,
};

/** The running control server. */
export interface ControlServer {
  /** Connections open now. */
  readonly connections: number;
  /** Stops listening (the socket file goes) and closes every open connection. */
  close(): Promise<void>;
}

/**
 * Serves `cert-csi renew` and `cert-csi status` on `<data-root>/..control.sock` (mode 0600 in
 * the 0700 data root). The caller holds the data root's lock, so a socket already at the name
 * was left by a plugin that died: it is replaced. Anything else there is refused, and left as
 * it is. What older versions kept for the CLI is removed first (legacy-control-files.ts).
 */
export async function serveControl(
  dataRoot: DataRoot,
  handlers: ControlHandlers,
  logger: Logger,
  limits: ControlLimits = DEFAULT_CONTROL_LIMITS,
): Promise<ControlServer> {
  await removeLegacyControlFiles(dataRoot, logger);
  const path = controlSocketOf(dataRoot);
  await removeStaleSocket(path, logger);
  const open = new Set<Socket>();
  const server: Server = createServer({ allowHalfOpen: true }, (socket) => {
    if (open.size >= limits.maxConnections) {
      socket.on('error', destroySocket);
      socket.once('finish', destroySocket);
      const busy = `busy: ${limits.maxConnections} requests are being served; try again`;
      socket.end(formatAnswerLine({ type: 'error', error: busy }));
      return;
    }
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    serveConnection(socket, handlers, logger, limits);
  });
  const address = socketAddress(path);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(address.address, () => resolve());
    });
    // The data root is 0700 already; the socket's own mode says the same to whoever looks.
    await chmod(path, 0o600);
  } catch (err) {
    address.release();
    throw new Error(`cannot serve cert-csi renew and status on ${path}: ${errorMessage(err)}`, {
      cause: err,
    });
  }
  // The CSI server keeps the plugin running; this one alone does not.
  server.unref();
  logger.info({ path }, 'serving cert-csi renew and status');
  return {
    get connections() {
      return open.size;
    },
    close: () =>
      new Promise<void>((resolve) => {
        // close() unlinks the socket file once the server stops listening.
        server.close(() => {
          address.release();
          resolve();
        });
        for (const socket of open) socket.destroy();
      }),
  };
}

// lstat, not stat: a link at the name is refused like any other non-socket, never followed.
async function removeStaleSocket(path: string, logger: Logger): Promise<void> {
  let kind: string;
  try {
    const stats = await lstat(path);
    if (stats.isSocket()) {
      await unlink(path);
      logger.info({ path }, 'removed the control socket of a previous run');
      return;
    }
    kind = fileKind(stats);
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return;
    throw err;
  }
  throw new Error(
    `${path} is ${kind}, not a socket: cert-csi renew and status are served there; remove it (it is left as it is)`,
  );
}
