import { type CommandOutput, processOutput } from '../common/command-output.js';
import { runDecision } from '../common/request-decision-command.js';
import { DENY_COMMAND } from './deny-flags.js';

/** `cert-csi deny NAME` (cmctl deny): marks a CertificateRequest Denied. */
export async function runDeny(args: string[], out: CommandOutput = processOutput): Promise<number> {
  return runDecision(DENY_COMMAND, 'deny', args, out);
}
