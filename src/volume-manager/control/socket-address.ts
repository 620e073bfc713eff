import { closeSync, constants, openSync } from 'node:fs';
import { basename, dirname } from 'node:path';

/**
 * The longest path bind(2) and connect(2) take for a unix socket: sun_path holds 108 bytes,
 * its NUL included.
 */
export const SOCKET_PATH_MAX_BYTES = 107;

/** Where to listen or connect for a unix socket path; release() once done with it. */
export interface SocketAddress {
  address: string;
  release(): void;
}

/**
 * The address of the socket at path. A path too long for sun_path is not cut short (Node
 * would bind the truncated path, a socket outside the data root, as measured): it is reached
 * as /proc/self/fd/N/NAME through a descriptor of its directory, held until release(). Throws
 * open(2)'s error when the directory cannot be opened (ENOENT, ENOTDIR).
 */
export function socketAddress(path: string): SocketAddress {
  if (Buffer.byteLength(path) <= SOCKET_PATH_MAX_BYTES) {
    return { address: path, release: () => undefined };
  }
  // O_NONBLOCK: a FIFO at the directory's name is refused (ENOTDIR), never waited on.
  const fd = openSync(
    dirname(path),
    constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NONBLOCK,
  );
  let open = true;
  return {
    address: `/proc/self/fd/${fd}/${basename(path)}`,
    release: () => {
      // Once only: the number may be another file's afterwards.
      if (open) closeSync(fd);
      open = false;
    },
  };
}
