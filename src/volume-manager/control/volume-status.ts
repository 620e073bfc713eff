import { X509Certificate } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { errorMessage } from '../../base/error-message.js';
import { readAtomically } from '../../fs/atomic-writer.js';
import { errnoCode } from '../../fs/errors.js';
import { RefusedFileError } from '../../fs/regular-file.js';
import type { DataRoot } from '../../volume/data-root.js';
import { VolumeError } from '../../volume/errors.js';
import { readMetadata, type VolumeMetadata } from '../../volume/metadata.js';
import { askStatus } from './control-client.js';
import type { PluginStatus, UnsavedFailure } from './control-protocol.js';

/**
 * One volume of the node as `cert-csi status` shows it: read from its files, with what the
 * running plugin holds in memory for it (a failure not saved, a renewal asked for).
 */
export interface VolumeStatus {
  volumeId: string;
  state: 'ok' | 'pending' | 'failing' | 'expired' | 'corrupt' | 'incomplete' | 'waiting';
  pod?: { namespace: string; name: string };
  issuer?: { name: string; kind: string; group: string };
  notAfter?: string;
  nextRenewal?: string;
  lastError?: { message: string; time: string };
  renewalPending: boolean;
  detail?: string;
  /** Published without a (new) certificate until its pod is ready: why, and since when. */
  waiting?: { reason: string; since: string };
}

/** Prefix of the name the volume manager gives an unparsable metadata.json it moves aside. */
export const CORRUPT_METADATA_PREFIX = 'metadata.json.corrupt-';

// Read here from the raw context rather than through the driver's attribute parser: the driver
// is a layer below the volume manager. Keys and defaults are csi-driver's (its pkg/apis).
const PREFIX = 'csi.cert-manager.io/';
const LEGACY_PREFIX = 'csi.certmanager.k8s.io/';
const POD_NAME_KEY = 'csi.storage.k8s.io/pod.name';
const POD_NAMESPACE_KEY = 'csi.storage.k8s.io/pod.namespace';

function attribute(context: Record<string, string>, name: string): string | undefined {
  // The current key wins over the legacy one, as in the driver.
  return context[`${PREFIX}${name}`] ?? context[`${LEGACY_PREFIX}${name}`];
}

/** How long `cert-csi status` waits for the plugin's answer before showing the files alone. */
export const STATUS_ANSWER_TIMEOUT_MS = 2000;

/** How many skipped files of one kind a status read names; the others are counted. */
export const SKIPPED_FILES_NAMED = 5;

/** Told about files a status read skipped (a FIFO, a link, a file over its cap), each by name. */
export type SkipWarning = (message: string) => void;

/**
 * Every volume under the data root, sorted by id; a volume that cannot be read becomes a row
 * saying so. A running plugin adds the failures it could not write to metadata.json, and
 * marks pending the volumes whose renewal on request (`cert-csi renew`) is not finished. Files
 * that are no regular files are never opened in a way that blocks: warn names those skipped.
 */
export async function readVolumeStatuses(
  dataRoot: DataRoot,
  now: Date = new Date(),
  warn: SkipWarning = () => undefined,
): Promise<VolumeStatus[]> {
  // No plugin answering (none runs, or it is stuck): the files alone.
  const plugin = await askStatus(dataRoot, { timeoutMs: STATUS_ANSWER_TIMEOUT_MS }).catch(
    (): PluginStatus => ({ unsaved: [], renewalsAsked: [] }),
  );
  const asked = new Set(plugin.renewalsAsked);
  const statuses: VolumeStatus[] = [];
  const unreadCertificates: string[] = [];
  for (const id of await dataRoot.listVolumeIds()) {
    const requested = asked.has(id);
    const inMemory = plugin.unsaved.find((u) => u.volumeId === id);
    const notAfterOf = (fileName: string | undefined) =>
      certificateNotAfter(dataRoot, id, fileName, unreadCertificates);
    try {
      statuses.push(await volumeStatus(dataRoot, id, requested, now, inMemory, notAfterOf));
    } catch (err) {
      statuses.push({
        volumeId: id,
        state: 'corrupt',
        renewalPending: requested,
        detail: errorMessage(err),
      });
    }
  }
  warnSkipped(warn, 'certificate files not read', unreadCertificates);
  return statuses;
}

// One warning per skipped file up to SKIPPED_FILES_NAMED, then one counting the rest.
function warnSkipped(warn: SkipWarning, what: string, messages: readonly string[]): void {
  for (const message of messages.slice(0, SKIPPED_FILES_NAMED)) warn(`${what}: ${message}`);
  const more = messages.length - SKIPPED_FILES_NAMED;
  if (more > 0) warn(`${what}: ${more} more`);
}

// requested: a renewal of the volume is asked of the plugin (cert-csi renew), not finished.
async function volumeStatus(
  dataRoot: DataRoot,
  id: string,
  requested: boolean,
  now: Date,
  unsaved: UnsavedFailure | undefined,
  notAfterOf: (fileName: string | undefined) => Promise<string | undefined>,
): Promise<VolumeStatus> {
  let meta: VolumeMetadata;
  try {
    meta = await readMetadata(dataRoot, id);
  } catch (err) {
    if (!(err instanceof VolumeError)) throw err;
    return unmanagedStatus(dataRoot, id, requested, err, notAfterOf);
  }
  const status: VolumeStatus = { volumeId: id, state: 'ok', renewalPending: false };
  const context = meta.volumeContext;
  const podName = context[POD_NAME_KEY];
  const podNamespace = context[POD_NAMESPACE_KEY];
  if (podName !== undefined && podNamespace !== undefined) {
    status.pod = { namespace: podNamespace, name: podName };
  }
  const issuerName = attribute(context, 'issuer-name');
  if (issuerName !== undefined) {
    status.issuer = {
      name: issuerName,
      kind: attribute(context, 'issuer-kind') || 'Issuer',
      group: attribute(context, 'issuer-group') || 'cert-manager.io',
    };
  }
  const notAfter = meta.notAfter ?? (await notAfterOf(attribute(context, 'certificate-file')));
  if (notAfter !== undefined) status.notAfter = notAfter;
  const failures = meta.failures ?? 0;
  // The plugin keeps a failure in memory only while metadata.json cannot take it: it is newer.
  const lastError = unsaved?.lastError ?? meta.lastError;
  const failed = failures > 0 || lastError !== undefined;
  // While failing, the next attempt is the backoff retry, not the planned renewal.
  const nextRenewal = (failed ? meta.nextRetryTime : undefined) ?? meta.nextIssuanceTime;
  if (nextRenewal !== undefined) status.nextRenewal = nextRenewal;
  if (lastError !== undefined) status.lastError = lastError;
  status.renewalPending =
    meta.pendingRequest !== undefined || failures > 0 || unsaved !== undefined || requested;

  const valid = notAfter !== undefined && Date.parse(notAfter) >= now.getTime();
  if (notAfter !== undefined && !valid) status.state = 'expired';
  else if (failed && !valid) status.state = 'failing';
  else if (status.renewalPending) status.state = 'pending';
  else if (!valid) {
    // Registered, first issuance not begun yet: nothing failed, nothing to serve yet.
    status.state = 'pending';
    status.detail = 'no certificate issued yet';
  }
  if (meta.pendingRequest !== undefined) {
    const { namespace, name } = meta.pendingRequest;
    status.detail = `waiting for CertificateRequest ${namespace}/${name}`;
  }
  if (meta.waiting !== undefined) {
    // The readiness gates (or the pod IP its SANs use) hold the issuance back.
    status.waiting = meta.waiting;
    if (status.state !== 'expired') status.state = 'waiting';
    status.detail = `waiting for the pod: ${meta.waiting.reason}`;
  }
  if (unsaved !== undefined) {
    status.detail = `last error held in the plugin's memory, metadata.json cannot be written: ${unsaved.saveError}`;
  }
  return status;
}

// A volume dir without readable metadata: the manager cannot manage it, so it is corrupt (the
// manager moved the bad file aside, or it is still in place) or incomplete (never written).
async function unmanagedStatus(
  dataRoot: DataRoot,
  id: string,
  requested: boolean,
  err: VolumeError,
  notAfterOf: (fileName: string | undefined) => Promise<string | undefined>,
): Promise<VolumeStatus> {
  const missing = errnoCode(err.cause) === 'ENOENT';
  const movedAside = (await readdir(dataRoot.volumeDir(id)))
    .filter((name) => name.startsWith(CORRUPT_METADATA_PREFIX))
    .sort()
    .at(-1);
  const status: VolumeStatus = {
    volumeId: id,
    state: missing && movedAside === undefined ? 'incomplete' : 'corrupt',
    renewalPending: requested,
  };
  // The volume is already named in its row; the bare file name keeps the reason readable.
  if (!missing) status.detail = err.message.replace(dataRoot.metadataPath(id), 'metadata.json');
  else if (movedAside !== undefined) status.detail = movedAside;
  else status.detail = 'no metadata.json';
  // The pod may still be served a certificate; say until when.
  const notAfter = await notAfterOf(undefined);
  if (notAfter !== undefined) status.notAfter = notAfter;
  return status;
}

// NotAfter of the certificate the pod sees, or undefined when there is none or it is unreadable;
// why, when a file there is refused (not a regular file, too large), goes to refused.
async function certificateNotAfter(
  dataRoot: DataRoot,
  id: string,
  fileName: string | undefined,
  refused: string[],
): Promise<string | undefined> {
  try {
    const files = await readAtomically(dataRoot.dataDir(id));
    const pem = files?.get(fileName || 'tls.crt');
    if (pem === undefined) return undefined;
    return new Date(new X509Certificate(pem).validTo).toISOString();
  } catch (err) {
    if ((err as Error).cause instanceof RefusedFileError) refused.push(errorMessage(err));
    return undefined;
  }
}
