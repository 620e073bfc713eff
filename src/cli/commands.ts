/** The `cert-csi` subcommands: dispatch by name; each subcommand wires its own parts. */
import { commandFailure } from './common/command-failure.js';
import { packageVersion } from './common/package-version.js';
import { UsageError } from './common/usage-error.js';

/** The top-level help: the commands only; each command's --help lists its flags. */
export const USAGE = `Usage: cert-csi <command> [flags]

Commands:
  node        run the CSI node plugin (embedded store and issuers, or --mode kubernetes)
  controller  run the controller stack (issuers, Certificates) against a cluster,
              leader-elected
  webhook     serve cert-manager's admission webhook (CertificateRequest identity
              and approval, validation) for a cluster without cert-manager
  publish     publish a volume through a running plugin, as kubelet would
  unpublish   unpublish a volume through a running plugin
  renew       make a running plugin renew a volume, or all, now; or mark a
              cert-manager Certificate for issuance (as cmctl renew)
  status      list this node's volumes, their certificates and renewal state;
              or show a cert-manager Certificate (as cmctl status certificate)
  version     print the version

Run "cert-csi <command> --help" for a command's flags.
`;

/** Runs `cert-csi ARGV` and resolves with its exit status. */
export async function runCommand(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  // Each command is imported on demand: a process loads only what its command uses (the
  // controller no gRPC, a CLI call no controller stack), which a restart pays for at once.
  switch (command) {
    case 'node':
      return (await import('./node/node-command.js')).runNode(rest);
    case 'controller':
      return (await import('./controller/controller-command.js')).runController(rest);
    case 'webhook':
      return (await import('./webhook/webhook-command.js')).runWebhook(rest);
    case 'publish':
      return (await import('./publish/publish-command.js')).runPublish(rest);
    case 'unpublish':
      return (await import('./publish/publish-command.js')).runUnpublish(rest);
    case 'renew':
      return (await import('./renew/renew-command.js')).runRenew(rest);
    case 'status':
      return (await import('./status/status-command.js')).runStatus(rest);
    case 'version':
    case '--version':
      process.stdout.write(`${packageVersion()}\n`);
      return 0;
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return 0;
    default: {
      const failure = commandFailure(new UsageError(`unknown command "${command}"`));
      process.stderr.write(`${failure.line}\n\n${USAGE}`);
      return failure.exitCode;
    }
  }
}
