import { dirname } from 'node:path';
import { errorMessage } from '../base/error-message.js';
import { removeFileDurably, writeFileAtomic } from './atomic-file.js';
import type { DataRoot } from './data-root.js';
import { errnoCode, VolumeError } from './errors.js';
import { fileOpsFor } from './volatile-fs.js';

type SecretKind = 'pending key' | 'PKCS#12 password' | 'JKS password';

function pathOf(root: DataRoot, id: string, kind: SecretKind): string {
  if (kind === 'pending key') return root.pendingKeyPath(id);
  return kind === 'JKS password' ? root.jksPasswordPath(id) : root.secretsPath(id);
}

async function writeSecret(root: DataRoot, id: string, kind: SecretKind, value: string) {
  const path = pathOf(root, id, kind);
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
  try {
    return (await fileOpsFor(dirname(path)).readFile(path)).toString('utf8');
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return undefined;
    throw new VolumeError(`cannot read ${kind} file ${path}: ${errorMessage(err)}`, {
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
