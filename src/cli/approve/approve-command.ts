import { type CommandOutput, processOutput } from '../common/command-output.js';
import { runDecision } from '../common/request-decision-command.js';
import { APPROVE_COMMAND } from './approve-flags.js';

/** `cert-csi approve NAME` (cmctl approve): marks a CertificateRequest Approved. */
export async function runApprove(
  args: string[],
  out: CommandOutput = processOutput,
): Promise<number> {
  return runDecision(APPROVE_COMMAND, 'approve', args, out);
}
