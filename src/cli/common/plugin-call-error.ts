import type { ErrorKind } from '../../base/error-catalogue.js';

/** The error a plugin answered a CSI call with (or the call's own, when it got no answer). */
export class PluginCallError extends Error {
  readonly errorKind: ErrorKind = 'CERT_CSI_PLUGIN_CALL_FAILED';
  override readonly name = 'PluginCallError';
}
