import { resolve } from 'node:path';
import { status } from '@grpc/grpc-js';
import { reportFailure } from './command-failure.js';
import type { CommandOutput } from './command-output.js';
import type { FlagTable } from './flag-table.js';
import { flagTimeout } from './flag-values.js';
import { PluginCallError } from './plugin-call-error.js';

// What `cert-csi publish` and `cert-csi unpublish` share: a CSI call to a running plugin.

/** How long publish and unpublish wait for the plugin's answer by default: kubelet's 2m. */
const DEFAULT_CALL_TIMEOUT = '2m';

/** The --timeout flag of publish and unpublish. */
export const CALL_TIMEOUT_FLAG = {
  timeout: {
    type: 'string',
    value: 'DURATION',
    default: DEFAULT_CALL_TIMEOUT,
    description: `how long to wait for the answer, Go syntax (default ${DEFAULT_CALL_TIMEOUT})`,
  },
} as const satisfies FlagTable;

/**
 * The flags every call needs. The target is made absolute here: the plugin refuses relative
 * paths (kubelet never sends one), and a person typing one means this directory.
 */
export function requireCallFlags(
  values: { endpoint?: string | undefined; target?: string | undefined; timeout: string },
  help: string,
): { endpoint: string; target: string; timeoutMs: number } {
  if (!values.endpoint || !values.target) {
    throw new Error(`--endpoint and --target are required\n\n${help}`);
  }
  return {
    endpoint: values.endpoint,
    target: resolve(values.target),
    timeoutMs: flagTimeout('--timeout', values.timeout),
  };
}

/** Whether our own deadline has passed (grpc-js's timer may fire a millisecond early). */
export function ranOut(started: number, timeoutMs: number): boolean {
  return Date.now() - started >= timeoutMs - 100;
}

/** Writes `error: CODE: message` (after our own deadline, also which --timeout ran out); exit 1. */
export function reportRpcError(out: CommandOutput, err: unknown, timedOutAfter?: string): number {
  const code = (err as { code?: number }).code;
  const details = (err as { details?: string }).details ?? String(err);
  const name = code === undefined ? 'UNKNOWN' : (status[code] ?? String(code));
  const hint =
    timedOutAfter !== undefined && code === status.DEADLINE_EXCEEDED
      ? ` (no answer within --timeout ${timedOutAfter})`
      : '';
  return reportFailure(out.stderr, new PluginCallError(`${name}: ${details}${hint}`), 'error');
}
