import { status } from '@grpc/grpc-js';
import { shortened } from '../../api/echoed-value.js';

// What a failed CSI call from `cert-csi publish`/`unpublish` says. A person needs to know whether
// a plugin is there, whether it answered, and what it answered; grpc-js's own wording (its
// channel states, resolver notes, per-phase timings) answers none of that and is never shown.

/** A CSI call that failed, as grpc-js reports it (a ServiceError's code and details). */
export interface FailedCall {
  code?: number | undefined;
  details?: string | undefined;
}

/** What the command knew when the call failed. */
export interface CallContext {
  /** The --endpoint as given (unix://PATH or tcp://HOST:PORT). */
  endpoint: string;
  volumeId: string;
  /** The --timeout text when our own deadline ran out, else undefined. */
  timedOutAfter?: string | undefined;
}

// Details grpc-js writes itself: a plugin (ours or another) answers in its own words.
const GRPC_JS_WORDING =
  /No connection established|Last error:|Resolution note:|name resolution:|LB pick:|Deadline exceeded after|RST_STREAM|Connection dropped|Call cancelled|Failed to connect|connect E[A-Z]+/;

// grpc-js's words for a channel that never connected: nothing listens there.
const NEVER_CONNECTED = /No connection established|Failed to connect|connect E[A-Z]+/;

/** The endpoint as a person named it: the socket path of a unix:// endpoint. */
function endpointPlace(endpoint: string): string {
  return shortened(endpoint.replace(/^unix:\/\//i, ''));
}

/**
 * The one line a failed call ends publish or unpublish with: no plugin there, no answer in
 * time, a connection lost, or the plugin's own answer (`CODE: details`).
 */
export function pluginCallMessage(err: FailedCall, call: CallContext): string {
  const code = err.code;
  const details = err.details ?? '';
  const internal = GRPC_JS_WORDING.test(details);
  const place = endpointPlace(call.endpoint);
  if (code === status.DEADLINE_EXCEEDED && (call.timedOutAfter !== undefined || internal)) {
    const after = call.timedOutAfter === undefined ? '' : ` after ${call.timedOutAfter}`;
    return `timed out${after} waiting for the plugin; its log says why (cert-csi status --data-root DIR --volume-id ${shortened(call.volumeId)} shows the last error)`;
  }
  if (code === status.UNAVAILABLE && NEVER_CONNECTED.test(details)) {
    return `no plugin answers at ${place}: is 'npm start' (or cert-csi node --endpoint ${shortened(call.endpoint)}) running?`;
  }
  const name = code === undefined ? 'UNKNOWN' : (status[code] ?? String(code));
  if (internal || code === undefined) {
    return `the connection to the plugin at ${place} ended without its answer (${name}): is it still running? its log says why`;
  }
  return `${name}: ${details || '(no message)'}`;
}
