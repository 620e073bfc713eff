import { dirname } from 'node:path';
import { errorMessage } from '../base/error-message.js';
import { removeFileDurably, writeFileAtomic } from '../fs/atomic-file.js';
import { errnoCode } from '../fs/errors.js';
import { byteSizeText, RefusedFileError } from '../fs/regular-file.js';
import { fileOpsFor } from '../fs/volatile-fs.js';
import type { DataRoot } from './data-root.js';
import { VolumeError } from './errors.js';

type SecretKind = 'pending key' | 'PKCS#12 password' | 'JKS password';

/**
 * The largest secret file read or written, per kind. A key PEM is a few KiB (RSA 8192: under
 * 7 KiB); a password is a volume attribute, which came in one NodePublishVolume message (at most
 * 4 MiB, gRPC's default limit).
 */
export const SECRET_FILE_MAX_BYTES: Readonly<Record<SecretKind, number>> = {
  'pending key': 64 * 1024,
  'PKCS#12 password': 4 * 1024 * 1024,
  'JKS password': 4 * 1024 * 1024,
};

function pathOf(root: DataRoot, id: string, kind: SecretKind): string {
  if (kind === 'pending key') return root.pendingKeyPath(id);
  return kind === 'JKS password' ? root.jksPasswordPath(id) : root.secretsPath(id);
}

async function writeSecret(root: DataRoot, id: string, kind: SecretKind, value: string) {
  const path = pathOf(root, id, kind);
  // What readSecret would refuse is never written; the message names the file, never the value.
  const bytes = Buffer.byteLength(value);
  if (bytes > SECRET_FILE_MAX_BYTES[kind]) {
    throw new VolumeError(
      `cannot write ${kind} file ${path}: it would be ${bytes} bytes, more than ${byteSizeText(SECRET_FILE_MAX_BYTES[kind])}`,
      { volumeId: id },
    );
  }
  try {
    await writeFileAtomic(path, value, 0o600);
  } catch (err) {
    // The message names the file, never the value.
    throw new VolumeError(`cannot write ${kind} file ${path}: ${errorMessage(err)}`, {
      volumeId: id,
      cause: err,
    });
  }
}

async function readSecret(root: DataRoot, id: string, kind: SecretKind) {
  const path = pathOf(root, id, kind);
  const ops = fileOpsFor(dirname(path));
  // Most volumes have no keystore password: on tmpfs an lstat that throws nothing says so for a
  // third of what open(2)'s ENOENT error costs to build (two per volume at every start).
  if (ops.volatile && (await ops.lstatIfExists(path)) === undefined) return undefined;
  try {
    const content = await ops.readFile(path, SECRET_FILE_MAX_BYTES[kind]);
    return content.toString('utf8');
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return undefined;
    const why = err instanceof RefusedFileError ? `it ${err.problem}` : errorMessage(err);
    throw new VolumeError(`cannot read ${kind} file ${path}: ${why}`, {
      volumeId: id,
      cause: err,
    });
  }
}

async function removeSecret(root: DataRoot, id: string, kind: SecretKind) {
  const path = pathOf(root, id, kind);
  try {
    return await removeFileDurably(path);
  } catch (err) {
    throw new VolumeError(`cannot remove ${kind} file ${path}: ${errorMessage(err)}`, {
      volumeId: id,
      cause: err,
    });
  }
}

/** Persists the PEM PKCS#8 key of the request in flight (pending.key, 0600, atomic). */
export function writePendingKey(root: DataRoot, id: string, pem: string): Promise<void> {
  return writeSecret(root, id, 'pending key', pem);
}

/** The pending key PEM, or undefined when no request is in flight. */
export function readPendingKey(root: DataRoot, id: string): Promise<string | undefined> {
  return readSecret(root, id, 'pending key');
}

/** Removes pending.key; resolves false when there was none. */
export function removePendingKey(root: DataRoot, id: string): Promise<boolean> {
  return removeSecret(root, id, 'pending key');
}

/** Persists the keystore password (pkcs12-password, 0600, atomic), outside metadata.json. */
export function writePkcs12Password(root: DataRoot, id: string, password: string): Promise<void> {
  return writeSecret(root, id, 'PKCS#12 password', password);
}

/** The keystore password, or undefined when the volume has none. */
export function readPkcs12Password(root: DataRoot, id: string): Promise<string | undefined> {
  return readSecret(root, id, 'PKCS#12 password');
}

/** Removes pkcs12-password; resolves false when there was none. */
export function removePkcs12Password(root: DataRoot, id: string): Promise<boolean> {
  return removeSecret(root, id, 'PKCS#12 password');
}

/** Persists the JKS keystore password (jks-password, 0600, atomic), outside metadata.json. */
export function writeJksPassword(root: DataRoot, id: string, password: string): Promise<void> {
  return writeSecret(root, id, 'JKS password', password);
}

/** The JKS keystore password, or undefined when the volume has none. */
export function readJksPassword(root: DataRoot, id: string): Promise<string | undefined> {
  return readSecret(root, id, 'JKS password');
}
