import { renewCertificate } from '../certificate-renew/certificate-renew.js';
import { type CommandOutput, processOutput } from '../common/command-output.js';
import { startCommand } from '../common/command-start.js';
import { RENEW_COMMAND } from './renew-flags.js';
import { renewVolumes } from './volume-renew.js';

/**
 * `cert-csi renew`: asks the plugin serving the data root to renew volumes now, or, with
 * --certificate, marks a cert-manager Certificate for issuance; reports the outcome.
 */
export async function runRenew(
  args: string[],
  out: CommandOutput = processOutput,
): Promise<number> {
  const started = startCommand(args, out, RENEW_COMMAND);
  if (typeof started === 'number') return started;
  return started.values.certificate === undefined
    ? renewVolumes(started, out)
    : renewCertificate(started, out);
}
