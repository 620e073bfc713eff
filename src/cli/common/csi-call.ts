import { resolve } from 'node:path';
import { errorMessage } from '../../base/error-message.js';
import { type Endpoint, parseEndpoint } from '../../driver/endpoint.js';
import { reportFailure } from './command-failure.js';
import type { CommandOutput } from './command-output.js';
import type { FlagTable } from './flag-table.js';
import { flagTimeout } from './flag-values.js';
import { PluginCallError } from './plugin-call-error.js';
import { type CallContext, type FailedCall, pluginCallMessage } from './plugin-call-failure.js';
import { UsageError } from './usage-error.js';

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
 * The flags every call needs, or a UsageError naming the first one missing. The target is made
 * absolute here: the plugin refuses relative paths (kubelet never sends one), and a person
 * typing one means this directory.
 */
export function requireCallFlags(values: {
  endpoint?: string | undefined;
  'volume-id'?: string | undefined;
  target?: string | undefined;
  timeout: string;
}): { endpoint: Endpoint; target: string; timeoutMs: number } {
  for (const flag of ['endpoint', 'volume-id', 'target'] as const) {
    if (!values[flag]) throw new UsageError(`--${flag} is required`);
  }
  // Each of the three is a non-empty string from here on.
  let endpoint: Endpoint;
  try {
    endpoint = parseEndpoint(values.endpoint as string);
  } catch (err) {
    throw new UsageError(`--endpoint: ${errorMessage(err)}`);
  }
  let timeoutMs: number;
  try {
    timeoutMs = flagTimeout('--timeout', values.timeout);
  } catch (err) {
    throw new UsageError(errorMessage(err));
  }
  return { endpoint, target: resolve(values.target as string), timeoutMs };
}

/** Whether our own deadline has passed (grpc-js's timer may fire a millisecond early). */
export function ranOut(started: number, timeoutMs: number): boolean {
  return Date.now() - started >= timeoutMs - 100;
}

/**
 * Writes the one line a failed call ends command with (pluginCallMessage) and where its help
 * is; exit 1.
 */
export function reportRpcError(
  out: CommandOutput,
  command: string,
  err: unknown,
  call: CallContext,
): number {
  const failed = err as FailedCall;
  return reportFailure(
    out.stderr,
    new PluginCallError(pluginCallMessage(failed, call)),
    `cert-csi ${command}`,
    command,
  );
}
