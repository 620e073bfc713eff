import { dirname, resolve } from 'node:path';
import { errorMessage } from '../base/error-message.js';
import { writeFileAtomic } from '../fs/atomic-file.js';
import { errnoCode } from '../fs/errors.js';
import { byteSizeText, RefusedFileError } from '../fs/regular-file.js';
import { fileOpsFor } from '../fs/volatile-fs.js';
import type { DataRoot } from './data-root.js';
import { VolumeError } from './errors.js';

/**
 * The largest metadata.json read or written. Its bulk is the volume context, which came in
 * one NodePublishVolume message, at most 4 MiB (gRPC's default limit on a received message).
 */
export const METADATA_MAX_BYTES = 4 * 1024 * 1024;

/** A CertificateRequest created for the volume and not yet finished; its key is in pending.key. */
export interface PendingRequest {
  name: string;
  namespace: string;
  uid?: string;
  createdAt: string;
}

/** The last failure of an issuance attempt. */
export interface VolumeFailure {
  message: string;
  time: string;
}

/** What the node keeps about one volume in `<root>/<id>/metadata.json`. */
export interface VolumeMetadata {
  volumeId: string;
  targetPath: string;
  /**
   * kubelet's volume context WITHOUT secrets: csi.storage.k8s.io/serviceAccount.tokens and
   * csi.cert-manager.io/pkcs12-password and jks-password (and their legacy aliases under
   * csi.certmanager.k8s.io/) are removed before writing.
   */
  volumeContext: Record<string, string>;
  volumeMountGroup?: string;
  /**
   * The volume_capability the volume was published with (CSI: a republish with another one is
   * incompatible); absent in metadata written by versions before it was recorded.
   */
  volumeCapability?: VolumeCapabilityRecord;
  /** RFC 3339. */
  nextIssuanceTime?: string;
  /** NotAfter of the certificate on disk, RFC 3339. */
  notAfter?: string;
  pendingRequest?: PendingRequest;
  lastError?: VolumeFailure;
  /** Consecutive failed attempts, for renewal backoff. */
  failures?: number;
  nextRetryTime?: string;
  /**
   * Set while the volume is published without a certificate, waiting for its pod
   * (readiness gates, or the pod IP its SANs use): why, and since when (RFC 3339).
   */
  waiting?: VolumeWaiting;
  /** The pod IPs the certificate on disk was issued with (${POD_IP}, ${POD_IPS}). */
  podIPs?: string[];
}

/**
 * The parts of a NodePublishVolume's volume_capability that a republish must repeat (the
 * volume_mount_group is kept beside it as volumeMountGroup; block volumes are refused).
 */
export interface VolumeCapabilityRecord {
  /** The access mode's name, e.g. SINGLE_NODE_WRITER; empty when kubelet sent none. */
  accessMode: string;
  /** The mount's fs_type; empty when none was asked for. */
  fsType: string;
  /** The mount's mount_flags, in kubelet's order. */
  mountFlags: string[];
}

/** Why a published volume has no certificate yet. */
export interface VolumeWaiting {
  reason: string;
  since: string;
}

/**
 * True when metadata records targetPath as the volume's target: the only path its publish may
 * reuse and its unpublish may unmount or clean (compared as normalized absolute paths).
 */
export function isRecordedTarget(metadata: VolumeMetadata, targetPath: string): boolean {
  return resolve(metadata.targetPath) === resolve(targetPath);
}

/** Volume-context keys that hold secrets and never reach metadata.json, unlike csi-lib's. */
export const SECRET_CONTEXT_KEYS: readonly string[] = [
  'csi.storage.k8s.io/serviceAccount.tokens',
  'csi.cert-manager.io/pkcs12-password',
  'csi.certmanager.k8s.io/pkcs12-password',
  'csi.cert-manager.io/jks-password',
  'csi.certmanager.k8s.io/jks-password',
];

/** A copy of context without the secret keys (service-account tokens, keystore passwords). */
export function stripSecrets(context: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(context)) {
    if (!SECRET_CONTEXT_KEYS.includes(key)) out[key] = value;
  }
  return out;
}

type Fields = Record<string, unknown>;

const isObject = (v: unknown): v is Fields =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

// Checks the shape and copies only known fields, so a hand-edited or foreign file never
// smuggles unexpected values into the manager.
function parseMetadata(value: unknown): VolumeMetadata {
  if (!isObject(value)) throw new Error('not a JSON object');
  const str = (obj: Fields, key: string, where = ''): string => {
    const v = obj[key];
    if (typeof v !== 'string') throw new Error(`${where}${key} must be a string`);
    return v;
  };
  const optStr = (obj: Fields, key: string, where = ''): string | undefined =>
    obj[key] === undefined ? undefined : str(obj, key, where);
  const context = value.volumeContext;
  if (!isObject(context)) throw new Error('volumeContext must be an object');
  const volumeContext: Record<string, string> = {};
  for (const key of Object.keys(context)) volumeContext[key] = str(context, key, 'volumeContext.');

  const meta: VolumeMetadata = {
    volumeId: str(value, 'volumeId'),
    targetPath: str(value, 'targetPath'),
    volumeContext,
  };
  const copy = (key: 'volumeMountGroup' | 'nextIssuanceTime' | 'notAfter' | 'nextRetryTime') => {
    const v = optStr(value, key);
    if (v !== undefined) meta[key] = v;
  };
  copy('volumeMountGroup');
  copy('nextIssuanceTime');
  copy('notAfter');
  copy('nextRetryTime');
  if (value.volumeCapability !== undefined) {
    const c = value.volumeCapability;
    if (!isObject(c)) throw new Error('volumeCapability must be an object');
    const flags = c.mountFlags;
    if (!Array.isArray(flags) || !flags.every((flag) => typeof flag === 'string')) {
      throw new Error('volumeCapability.mountFlags must be an array of strings');
    }
    meta.volumeCapability = {
      accessMode: str(c, 'accessMode', 'volumeCapability.'),
      fsType: str(c, 'fsType', 'volumeCapability.'),
      mountFlags: [...flags],
    };
  }
  if (value.pendingRequest !== undefined) {
    const p = value.pendingRequest;
    if (!isObject(p)) throw new Error('pendingRequest must be an object');
    const where = 'pendingRequest.';
    meta.pendingRequest = {
      name: str(p, 'name', where),
      namespace: str(p, 'namespace', where),
      createdAt: str(p, 'createdAt', where),
    };
    const uid = optStr(p, 'uid', where);
    if (uid !== undefined) meta.pendingRequest.uid = uid;
  }
  if (value.lastError !== undefined) {
    const e = value.lastError;
    if (!isObject(e)) throw new Error('lastError must be an object');
    meta.lastError = {
      message: str(e, 'message', 'lastError.'),
      time: str(e, 'time', 'lastError.'),
    };
  }
  if (value.failures !== undefined) {
    const f = value.failures;
    if (typeof f !== 'number' || !Number.isInteger(f) || f < 0) {
      throw new Error('failures must be a non-negative integer');
    }
    meta.failures = f;
  }
  if (value.waiting !== undefined) {
    const w = value.waiting;
    if (!isObject(w)) throw new Error('waiting must be an object');
    meta.waiting = { reason: str(w, 'reason', 'waiting.'), since: str(w, 'since', 'waiting.') };
  }
  if (value.podIPs !== undefined) {
    const ips = value.podIPs;
    if (!Array.isArray(ips) || !ips.every((ip) => typeof ip === 'string')) {
      throw new Error('podIPs must be an array of strings');
    }
    meta.podIPs = [...ips];
  }
  return meta;
}

/** Reads and checks `<root>/<id>/metadata.json`; VolumeError naming the file when missing, not JSON or of the wrong shape. */
export async function readMetadata(root: DataRoot, id: string): Promise<VolumeMetadata> {
  const path = root.metadataPath(id);
  let text: string;
  try {
    text = (await fileOpsFor(dirname(path)).readFile(path, METADATA_MAX_BYTES)).toString('utf8');
  } catch (err) {
    let why = `cannot be read: ${errorMessage(err)}`;
    if (errnoCode(err) === 'ENOENT') why = 'does not exist';
    else if (err instanceof RefusedFileError) why = err.problem;
    throw new VolumeError(`metadata file ${path} ${why}`, { volumeId: id, cause: err });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new VolumeError(`metadata file ${path} is not valid JSON: ${errorMessage(err)}`, {
      volumeId: id,
      cause: err,
    });
  }
  let meta: VolumeMetadata;
  try {
    meta = parseMetadata(json);
  } catch (err) {
    throw new VolumeError(`metadata file ${path} is invalid: ${errorMessage(err)}`, {
      volumeId: id,
    });
  }
  if (meta.volumeId !== id) {
    throw new VolumeError(
      `metadata file ${path} is invalid: it belongs to volume ${JSON.stringify(meta.volumeId)}`,
      { volumeId: id },
    );
  }
  meta.volumeContext = stripSecrets(meta.volumeContext);
  return meta;
}

/**
 * Writes `<root>/<id>/metadata.json` atomically (temp file, fsync, rename, fsync dir; 0600),
 * secrets stripped. The volume dir must exist: a late writer never recreates a removed volume.
 */
export async function writeMetadata(root: DataRoot, meta: VolumeMetadata): Promise<void> {
  const path = root.metadataPath(meta.volumeId);
  let clean: VolumeMetadata;
  try {
    clean = parseMetadata({ ...meta, volumeContext: stripSecrets(meta.volumeContext) });
  } catch (err) {
    throw new VolumeError(`refusing to write invalid metadata to ${path}: ${errorMessage(err)}`, {
      volumeId: meta.volumeId,
    });
  }
  const text = `${JSON.stringify(clean)}\n`;
  // What readMetadata would refuse is never written.
  const bytes = Buffer.byteLength(text);
  if (bytes > METADATA_MAX_BYTES) {
    throw new VolumeError(
      `refusing to write metadata to ${path}: it is ${bytes} bytes, more than ${byteSizeText(METADATA_MAX_BYTES)}`,
      { volumeId: meta.volumeId },
    );
  }
  try {
    await writeFileAtomic(path, text, 0o600);
  } catch (err) {
    const why = errnoCode(err) === 'ENOENT' ? 'the volume dir does not exist' : errorMessage(err);
    throw new VolumeError(`cannot write metadata file ${path}: ${why}`, {
      volumeId: meta.volumeId,
      cause: err,
    });
  }
}
