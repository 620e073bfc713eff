import { join } from 'node:path';
import { quoted } from '../../api/echoed-value.js';
import { type NamespacedName, namespacedNameProblem } from '../../api/namespaced-name.js';
import { errorMessage } from '../../base/error-message.js';
import type { DataRoot } from '../../volume/data-root.js';
import type { VolumeFailure } from '../../volume/metadata.js';
import { validateVolumeId } from '../../volume/volume-id.js';

// `cert-csi renew` and `cert-csi status` talk to the running plugin over one unix socket in the
// data root: a socket needs no free space, so a full data root (which takes no file) still gets
// renew and status answers. One request per connection, as one JSON line; the plugin answers
// with JSON lines (control-answers.ts): "accepted" once it took the request, the items (a
// volume renewed or failed, a failure held in memory, a volume whose renewal is asked for, a
// Certificate marked) as they come, then "done"; or one "error" line, after which it closes
// the connection.

/** Name of the socket in the data root; `..`-prefixed, so it is never taken for a volume. */
export const CONTROL_SOCKET_NAME = '..control.sock';

/**
 * The largest request line, newline excluded: a request names a volume id (at most 128
 * characters) or a Certificate's namespace and name (at most 253 each).
 */
export const REQUEST_MAX_BYTES = 4 * 1024;

/** `<data-root>/..control.sock`. */
export function controlSocketOf(dataRoot: DataRoot): string {
  return join(dataRoot.root, CONTROL_SOCKET_NAME);
}

/** What a renewal request asks to renew: one volume, or every volume of the node. */
export type RenewTarget = { volumeId: string } | { all: true };

/** A volume renewed on request: its new expiry and next renewal. */
export interface RenewedVolume {
  volumeId: string;
  notAfter: string;
  nextIssuanceTime?: string;
}

/** A volume whose renewal on request failed, and why. */
export interface FailedVolume {
  volumeId: string;
  error: string;
}

/** What renewing a target did, volume by volume. */
export interface RenewOutcome {
  renewed: RenewedVolume[];
  failed: FailedVolume[];
}

/** A Certificate of the plugin's store marked for issuance now (cmctl renew). */
export interface CertificateTriggered extends NamespacedName {
  /** Issuing was True already: that issuance goes on, now marked as asked for by hand. */
  alreadyIssuing: boolean;
}

/** A failure the plugin holds in memory because it could not write it to metadata.json. */
export interface UnsavedFailure {
  volumeId: string;
  lastError: VolumeFailure;
  /** Why metadata.json could not be written. */
  saveError: string;
}

/** What the running plugin knows of its volumes that their files do not say (`status`). */
export interface PluginStatus {
  /** The failures held in memory because metadata.json could not take them. */
  unsaved: UnsavedFailure[];
  /** The volumes whose renewal on request (`cert-csi renew`) is asked for, not finished yet. */
  renewalsAsked: string[];
}

/** A person's word on a CertificateRequest of the plugin's store (`cert-csi approve`/`deny`). */
export interface RequestDecisionAsked extends NamespacedName {
  decision: 'Approved' | 'Denied';
  reason: string;
  message: string;
}

/** One request to the plugin. */
export type ControlRequest =
  | { op: 'renew'; target: RenewTarget }
  | { op: 'renew-certificate'; certificate: NamespacedName }
  | { op: 'decide-request'; decision: RequestDecisionAsked }
  | { op: 'status' };

/** The request as its line: `{"op": "renew", "volumeId"}` or `"all": true`, and so on. */
export function formatControlRequest(request: ControlRequest): string {
  switch (request.op) {
    case 'renew':
      return `${JSON.stringify({ op: 'renew', ...request.target })}\n`;
    case 'renew-certificate':
      return `${JSON.stringify({ op: request.op, ...request.certificate })}\n`;
    case 'decide-request':
      return `${JSON.stringify({ op: request.op, ...request.decision })}\n`;
    case 'status':
      return `${JSON.stringify({ op: request.op })}\n`;
  }
}

type Fields = Record<string, unknown>;

/** True for a JSON object (not an array, not null). */
export const isFields = (v: unknown): v is Fields =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Parses a request line; throws an Error saying what is wrong, the value shortened. Fields it
 * does not know are ignored: a newer CLI may send more than this plugin needs.
 */
export function parseControlRequest(text: string): ControlRequest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`not JSON: ${errorMessage(err)}`);
  }
  if (!isFields(value)) throw new Error('not a JSON object');
  const { op } = value;
  switch (op) {
    case 'renew':
      return { op, target: parseTarget(value) };
    case 'renew-certificate':
      return { op, certificate: parseCertificateRef(value, op) };
    case 'decide-request':
      return { op, decision: parseDecision(value) };
    case 'status':
      return { op };
    default:
      throw new Error(
        `${typeof op === 'string' ? `op ${quoted(op)}` : 'op missing or not a string'}: expected "renew", "renew-certificate", "decide-request" or "status"`,
      );
  }
}

function parseTarget(value: Fields): RenewTarget {
  const { volumeId, all } = value;
  if (all !== undefined) {
    if (all !== true) throw new Error('all must be true');
    if (volumeId !== undefined) throw new Error('renew names both volumeId and all');
    return { all: true };
  }
  if (typeof volumeId !== 'string') throw new Error('renew needs volumeId or "all": true');
  // The id becomes a path under the data root: refuse anything that is not one safe segment.
  validateVolumeId(volumeId);
  return { volumeId };
}

// {"namespace", "name"}, both valid names: they become a store key (and a path in the state dir).
function parseCertificateRef(value: Fields, op: string): NamespacedName {
  const { namespace, name } = value;
  if (typeof namespace !== 'string' || typeof name !== 'string') {
    throw new Error(`${op} needs a namespace and a name, both strings`);
  }
  const ref = { namespace, name };
  const problem = namespacedNameProblem(ref);
  if (problem)
    throw new Error(`${op === 'renew-certificate' ? 'certificate' : 'request'}: ${problem}`);
  return ref;
}

/** The longest reason or message a decision carries (the request line's bound holds it). */
export const DECISION_TEXT_MAX_CHARS = 1024;

// A CertificateRequest, Approved or Denied, a reason and a message: non-empty, bounded strings.
function parseDecision(value: Fields): RequestDecisionAsked {
  const ref = parseCertificateRef(value, 'decide-request');
  const { decision, reason, message } = value;
  if (decision !== 'Approved' && decision !== 'Denied') {
    throw new Error('decide-request: decision must be "Approved" or "Denied"');
  }
  for (const [field, text] of [
    ['reason', reason],
    ['message', message],
  ] as const) {
    if (typeof text !== 'string' || text === '' || text.length > DECISION_TEXT_MAX_CHARS) {
      throw new Error(
        `decide-request: ${field} must be a string of 1 to ${DECISION_TEXT_MAX_CHARS} characters`,
      );
    }
  }
  return { ...ref, decision, reason: reason as string, message: message as string };
}
