import { type CommandOutput, processOutput } from '../common/command-output.js';
import { packageVersion } from '../common/package-version.js';

export const VERSION_HELP = `Usage: cert-csi version
       cert-csi --version

Prints the version of cert-csi.
`;

/** `cert-csi version`: prints the version; it takes no flags and ignores any arguments. */
export async function runVersion(
  _args: string[],
  out: CommandOutput = processOutput,
): Promise<number> {
  out.stdout.write(`${packageVersion()}\n`);
  return 0;
}
