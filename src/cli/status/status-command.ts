import { certificateStatus } from '../certificate-status/certificate-status.js';
import { type CommandOutput, processOutput } from '../common/command-output.js';
import { startCommand, usageError } from '../common/command-start.js';
import { terminationSignal } from '../common/termination.js';
import { requestsStatus } from '../requests-status/requests-status.js';
import { STATUS_COMMAND } from './status-flags.js';
import { volumesStatus } from './volumes-status.js';

/**
 * `cert-csi status`: the volumes of this node, from their files; or, with --certificate, one
 * cert-manager Certificate; or, with --requests, the CertificateRequests awaiting approval.
 */
export async function runStatus(
  args: string[],
  out: CommandOutput = processOutput,
  /** Ends --watch; SIGINT or SIGTERM by default. */
  until: () => Promise<unknown> = terminationSignal,
): Promise<number> {
  const started = startCommand(args, out, STATUS_COMMAND);
  if (typeof started === 'number') return started;
  const { values } = started;
  if (values.certificate === undefined && !values.requests) {
    return volumesStatus(started, out, until);
  }
  if (values.watch) return usageError(out, STATUS_COMMAND, '--watch: only used with --data-root');
  if (values['volume-id'] !== undefined) {
    return usageError(out, STATUS_COMMAND, '--volume-id: only used with --data-root');
  }
  if (values.certificate !== undefined && values.requests) {
    return usageError(
      out,
      STATUS_COMMAND,
      '--certificate and --requests are two views: give one of them',
    );
  }
  return values.requests ? requestsStatus(started, out) : certificateStatus(started, out);
}
