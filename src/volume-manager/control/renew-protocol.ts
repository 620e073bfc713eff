import { join } from 'node:path';
import { type NamespacedName, namespacedNameProblem } from '../../api/namespaced-name.js';
import { isAtomicTempFile } from '../../fs/atomic-file.js';
import type { DataRoot } from '../../volume/data-root.js';
import { isValidVolumeId } from '../../volume/volume-id.js';

// The files `cert-csi renew` and a running plugin exchange in `<data-root>/..renew/`: a request
// `<id>.request` ({"volumeId"} or {"all": true}, plus "requestedAt"), answered by `<id>.result`.
// While it works, the plugin keeps `<id>.progress` (a result of the volumes done so far) up to
// date, so the command can print each volume as it finishes; it removes the file once the
// result is written. All are written atomically, so a reader never sees half a file.
//
// A request may instead name a Certificate of the plugin's own store (embedded mode), as
// {"certificate": {"namespace", "name"}}: the plugin sets its Issuing condition (cmctl renew)
// and answers {"ok": true, "triggered": {"namespace", "name", "alreadyIssuing"}}, or
// {"ok": false, "error"}; no progress file. A plugin older than this answers such a request
// with {"ok": false, "error": "request needs volumeId or \"all\": true"}.

/** Name of the request dir in the data root; `..`-prefixed, so it is never taken for a volume. */
export const RENEW_DIR_NAME = '..renew';
/** Suffix of a request file. */
export const REQUEST_SUFFIX = '.request';
/** Suffix of a result file. */
export const RESULT_SUFFIX = '.result';
/** Suffix of a progress file: the same format as an ok result, for the volumes done so far. */
export const PROGRESS_SUFFIX = '.progress';

/**
 * The largest request file read: one is a volume id or a Certificate's namespace and name
 * (each at most 253 characters) and a time stamp, some 600 bytes at most.
 */
export const RENEW_REQUEST_MAX_BYTES = 4 * 1024;

/**
 * The largest result or progress file the CLI reads: one line per volume of the node, with
 * the error of each failed one.
 */
export const RENEW_RESULT_MAX_BYTES = 64 * 1024 * 1024;

/** What a request asks to renew: one volume, or every volume of the node. */
export type RenewTarget = { volumeId: string } | { all: true };

/** A request for a Certificate of the plugin's store: mark it for issuance now (cmctl renew). */
export interface CertificateTarget {
  certificate: NamespacedName;
}

/** A request file's content. */
export type RenewRequest = (RenewTarget | CertificateTarget) & { requestedAt?: string };

/** The answer to a CertificateTarget: the condition is set. */
export interface CertificateTriggered extends NamespacedName {
  /** Issuing was True already: that issuance goes on, now marked as asked for by hand. */
  alreadyIssuing: boolean;
}

/** What renewing a target did, volume by volume. */
export interface RenewOutcome {
  renewed: Array<{ volumeId: string; notAfter: string; nextIssuanceTime?: string }>;
  failed: Array<{ volumeId: string; error: string }>;
}

/** A result file's content: the outcome, or why the request could not be served at all. */
export type RenewResult = ({ ok: true } & RenewOutcome) | { ok: false; error: string };

/** A result file's content for a CertificateTarget. */
export type CertificateResult =
  | { ok: true; triggered: CertificateTriggered }
  | { ok: false; error: string };

/** `<data-root>/..renew`. */
export function renewDirOf(dataRoot: DataRoot): string {
  return join(dataRoot.root, RENEW_DIR_NAME);
}

/** The request id of a request file name, or undefined for any other entry (results, temp files). */
export function requestIdOf(fileName: string): string | undefined {
  return idOf(fileName, REQUEST_SUFFIX);
}

/** The request id of a result file name, or undefined for any other entry. */
export function resultIdOf(fileName: string): string | undefined {
  return idOf(fileName, RESULT_SUFFIX);
}

/** The request id of a progress file name, or undefined for any other entry. */
export function progressIdOf(fileName: string): string | undefined {
  return idOf(fileName, PROGRESS_SUFFIX);
}

function idOf(fileName: string, suffix: string): string | undefined {
  // writeFileAtomic's temp files are `.<name>.tmp-<hex>`: never a finished file.
  if (!fileName.endsWith(suffix) || isAtomicTempFile(fileName)) return undefined;
  const id = fileName.slice(0, -suffix.length);
  return id === '' ? undefined : id;
}

type Fields = Record<string, unknown>;

const isObject = (v: unknown): v is Fields =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Parses a request file; throws an Error saying what is wrong. */
export function parseRenewRequest(text: string): RenewRequest {
  const value: unknown = JSON.parse(text);
  if (!isObject(value)) throw new Error('request is not a JSON object');
  const { volumeId, all, certificate, requestedAt } = value;
  if (requestedAt !== undefined && typeof requestedAt !== 'string') {
    throw new Error('requestedAt must be a string');
  }
  const stamp = requestedAt === undefined ? {} : { requestedAt };
  if (certificate !== undefined) {
    if (volumeId !== undefined || all !== undefined) {
      throw new Error('request names a certificate and volumes');
    }
    return { certificate: parseCertificateRef(certificate), ...stamp };
  }
  if (all !== undefined) {
    if (all !== true) throw new Error('all must be true');
    if (volumeId !== undefined) throw new Error('request names both volumeId and all');
    return { all: true, ...stamp };
  }
  if (typeof volumeId !== 'string') throw new Error('request needs volumeId or "all": true');
  // The id becomes a path under the data root: refuse anything that is not one safe segment.
  if (!isValidVolumeId(volumeId)) throw new Error(`invalid volume id ${JSON.stringify(volumeId)}`);
  return { volumeId, ...stamp };
}

// {"namespace", "name"}, both valid names: they become a store key (and a path in the state dir).
function parseCertificateRef(value: unknown): NamespacedName {
  if (!isObject(value)) throw new Error('certificate must be an object');
  const { namespace, name } = value;
  if (typeof namespace !== 'string' || typeof name !== 'string') {
    throw new Error('certificate needs a namespace and a name, both strings');
  }
  const ref = { namespace, name };
  const problem = namespacedNameProblem(ref);
  if (problem) throw new Error(`certificate: ${problem}`);
  return ref;
}

/** Serialises a request for target made at now. */
export function formatRenewRequest(target: RenewTarget | CertificateTarget, now: Date): string {
  return `${JSON.stringify({ ...target, requestedAt: now.toISOString() })}\n`;
}

/** Whether a request asks for the given volume (by id or by "all"). */
export function requestCovers(request: RenewTarget, volumeId: string): boolean {
  return 'all' in request || request.volumeId === volumeId;
}

// Copies only the known fields, so nothing else a handler returns (a key, a whole metadata
// object) can reach a file that other users of the node may read.
function cleanOutcome(outcome: RenewOutcome): RenewOutcome {
  return {
    renewed: outcome.renewed.map(({ volumeId, notAfter, nextIssuanceTime }) => ({
      volumeId: String(volumeId),
      notAfter: String(notAfter),
      ...(nextIssuanceTime === undefined ? {} : { nextIssuanceTime: String(nextIssuanceTime) }),
    })),
    failed: outcome.failed.map(({ volumeId, error }) => ({
      volumeId: String(volumeId),
      error: String(error),
    })),
  };
}

/** Serialises a result; an outcome keeps only volume ids, times and error messages. */
export function formatRenewResult(result: RenewResult | CertificateResult): string {
  let clean: RenewResult | CertificateResult;
  if (!result.ok) {
    clean = { ok: false, error: String(result.error) };
  } else if ('triggered' in result) {
    const { namespace, name, alreadyIssuing } = result.triggered;
    clean = {
      ok: true,
      triggered: {
        namespace: String(namespace),
        name: String(name),
        alreadyIssuing: !!alreadyIssuing,
      },
    };
  } else {
    clean = { ok: true, ...cleanOutcome(result) };
  }
  return `${JSON.stringify(clean)}\n`;
}

/** Parses a result file; throws an Error saying what is wrong. */
export function parseRenewResult(text: string): RenewResult {
  const envelope = parseResultEnvelope(text);
  if (!envelope.ok) return envelope;
  const { value } = envelope;
  const list = (key: string): Fields[] => {
    const v = value[key];
    if (!Array.isArray(v) || !v.every(isObject)) throw new Error(`result ${key} must be a list`);
    return v;
  };
  const str = (obj: Fields, key: string): string => {
    const v = obj[key];
    if (typeof v !== 'string') throw new Error(`result entry ${key} must be a string`);
    return v;
  };
  return {
    ok: true,
    renewed: list('renewed').map((r) => ({
      volumeId: str(r, 'volumeId'),
      notAfter: str(r, 'notAfter'),
      ...(r.nextIssuanceTime === undefined ? {} : { nextIssuanceTime: str(r, 'nextIssuanceTime') }),
    })),
    failed: list('failed').map((f) => ({ volumeId: str(f, 'volumeId'), error: str(f, 'error') })),
  };
}

/** Parses the result file of a CertificateTarget; throws an Error saying what is wrong. */
export function parseCertificateResult(text: string): CertificateResult {
  const envelope = parseResultEnvelope(text);
  if (!envelope.ok) return envelope;
  return { ok: true, triggered: parseTriggered(envelope.value.triggered) };
}

// What every result file has: `ok`, and the error when it is false.
function parseResultEnvelope(
  text: string,
): { ok: false; error: string } | { ok: true; value: Fields } {
  const value: unknown = JSON.parse(text);
  if (!isObject(value)) throw new Error('result is not a JSON object');
  if (value.ok === false) {
    if (typeof value.error !== 'string') throw new Error('result error must be a string');
    return { ok: false, error: value.error };
  }
  if (value.ok !== true) throw new Error('result ok must be true or false');
  return { ok: true, value };
}

function parseTriggered(value: unknown): CertificateTriggered {
  if (!isObject(value)) throw new Error('result triggered must be an object');
  const { namespace, name, alreadyIssuing } = value;
  if (typeof namespace !== 'string' || typeof name !== 'string') {
    throw new Error('result triggered needs a namespace and a name, both strings');
  }
  if (typeof alreadyIssuing !== 'boolean') {
    throw new Error('result triggered alreadyIssuing must be true or false');
  }
  return { namespace, name, alreadyIssuing };
}

/**
 * The volumes a progress file lists, or none when it cannot be read: progress is only a
 * courtesy, the result file says what happened.
 */
export function parseRenewProgress(text: string): RenewOutcome {
  try {
    const result = parseRenewResult(text);
    if (result.ok) return { renewed: result.renewed, failed: result.failed };
  } catch {
    // Unreadable: nothing to show.
  }
  return { renewed: [], failed: [] };
}
