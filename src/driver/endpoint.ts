import type { Stats } from 'node:fs';
import { lstat, mkdir, unlink } from 'node:fs/promises';
import { connect } from 'node:net';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { Logger } from '../api/logger.js';

/** A parsed `--endpoint`: a unix socket path or a TCP address. */
export type Endpoint = { kind: 'unix'; path: string } | { kind: 'tcp'; address: string };

/**
 * Parses `unix:///abs/csi.sock`, `unix://relative/csi.sock` (relative to cwd) or
 * `tcp://host:port`; anything else is an error naming the value.
 */
export function parseEndpoint(text: string): Endpoint {
  const match = /^(unix|tcp):\/\/(.+)$/i.exec(text);
  const scheme = match?.[1]?.toLowerCase();
  const rest = match?.[2];
  if (!scheme || !rest) {
    throw new Error(`invalid endpoint "${text}": expected unix://PATH or tcp://HOST:PORT`);
  }
  if (scheme === 'unix') return { kind: 'unix', path: isAbsolute(rest) ? rest : resolve(rest) };
  if (!/^[^:/]+:\d+$|^\[[0-9a-fA-F:]+\]:\d+$/.test(rest)) {
    throw new Error(`invalid endpoint "${text}": expected tcp://HOST:PORT`);
  }
  return { kind: 'tcp', address: rest };
}

/** The address grpc-js binds or dials for an endpoint. */
export function grpcAddress(endpoint: Endpoint): string {
  return endpoint.kind === 'unix' ? `unix://${endpoint.path}` : endpoint.address;
}

// How long a connect to an existing socket may take before it counts as answered (a live server
// with a full backlog): a socket we cannot prove dead is never removed.
const PROBE_DEADLINE_MS = 3_000;

/** What an existing unix socket path answers to a connect. */
async function socketAnswers(path: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(true);
    }, PROBE_DEADLINE_MS);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(true);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      socket.destroy();
      if (err.code === 'ECONNREFUSED') resolve(false);
      else reject(err);
    });
  });
}

/**
 * Makes a unix endpoint's path free for this plugin to listen on, or refuses: a missing path gets
 * its parent dir; a socket nobody answers on (left by a killed plugin) is removed; a socket that
 * answers (another plugin), or anything that is not a socket (a file, a dir), is an error naming
 * it and is never touched.
 */
export async function freeUnixEndpoint(path: string, logger: Logger): Promise<void> {
  let info: Stats;
  try {
    info = await lstat(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new Error(`cannot inspect endpoint ${path}: ${(err as Error).message}`, { cause: err });
    }
    await mkdir(dirname(path), { recursive: true });
    return;
  }
  if (!info.isSocket()) {
    throw new Error(
      `endpoint ${path} exists and is ${describeFileType(info)}, not a socket: refusing to start (it is left as it is; choose another --endpoint or remove it yourself)`,
    );
  }
  let answers: boolean;
  try {
    answers = await socketAnswers(path);
  } catch (err) {
    throw new Error(`cannot probe endpoint ${path}: ${(err as Error).message}`, { cause: err });
  }
  if (answers) {
    throw new Error(
      `endpoint ${path} is served by a running process (another cert-csi plugin?): refusing to start on it`,
    );
  }
  await unlink(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
  logger.info({ path }, 'removed the stale socket of a previous run');
}

function describeFileType(info: Stats): string {
  if (info.isFile()) return 'a regular file';
  if (info.isDirectory()) return 'a directory';
  if (info.isSymbolicLink()) return 'a symbolic link';
  return 'a special file';
}
