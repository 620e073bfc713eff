// The `cert-csi` commands, in the order the top-level usage lists them. commands.ts dispatches
// from this table and renders the usage from it; cli-reference.ts renders docs/cli.md.

/** A command's entry point: its arguments; resolves with the exit status. */
export type CommandRun = (args: string[]) => Promise<number>;

/** One `cert-csi` command. */
export interface CommandEntry {
  readonly name: string;
  /** What it does, as the top-level usage's lines say it (one line, or more where it wraps). */
  readonly summary: readonly string[];
  /**
   * Loads the command's module and gives its entry point. Each command is imported on demand:
   * a process loads only what its command uses (the controller no gRPC, a CLI call no
   * controller stack), which a restart pays for at once.
   */
  readonly run: () => Promise<CommandRun>;
  /** Loads the command's help text (what `cert-csi NAME --help` prints). */
  readonly help: () => Promise<string>;
}

export const COMMANDS: readonly CommandEntry[] = [
  {
    name: 'node',
    summary: ['run the CSI node plugin (embedded store and issuers, or --mode kubernetes)'],
    run: async () => (await import('./node/node-command.js')).runNode,
    help: async () => (await import('./node/node-flags.js')).NODE_HELP,
  },
  {
    name: 'controller',
    summary: [
      'run the controller stack (issuers, Certificates) against a cluster,',
      'leader-elected',
    ],
    run: async () => (await import('./controller/controller-command.js')).runController,
    help: async () => (await import('./controller/controller-flags.js')).CONTROLLER_HELP,
  },
  {
    name: 'webhook',
    summary: [
      "serve cert-manager's admission webhook (CertificateRequest identity",
      'and approval, validation) for a cluster without cert-manager',
    ],
    run: async () => (await import('./webhook/webhook-command.js')).runWebhook,
    help: async () => (await import('./webhook/webhook-flags.js')).WEBHOOK_HELP,
  },
  {
    name: 'publish',
    summary: ['publish a volume through a running plugin, as kubelet would'],
    run: async () => (await import('./publish/publish-command.js')).runPublish,
    help: async () => (await import('./publish/publish-flags.js')).PUBLISH_HELP,
  },
  {
    name: 'unpublish',
    summary: ['unpublish a volume through a running plugin'],
    run: async () => (await import('./unpublish/unpublish-command.js')).runUnpublish,
    help: async () => (await import('./unpublish/unpublish-flags.js')).UNPUBLISH_HELP,
  },
  {
    name: 'renew',
    summary: [
      'make a running plugin renew a volume, or all, now; or mark a',
      'cert-manager Certificate for issuance (as cmctl renew)',
    ],
    run: async () => (await import('./renew/renew-command.js')).runRenew,
    help: async () => (await import('./renew/renew-flags.js')).RENEW_HELP,
  },
  {
    name: 'status',
    summary: [
      "list this node's volumes, their certificates and renewal state;",
      'or show a cert-manager Certificate (as cmctl status certificate)',
    ],
    run: async () => (await import('./status/status-command.js')).runStatus,
    help: async () => (await import('./status/status-flags.js')).STATUS_HELP,
  },
  {
    name: 'approve',
    summary: ['approve a CertificateRequest (as cmctl approve)'],
    run: async () => (await import('./approve/approve-command.js')).runApprove,
    help: async () => (await import('./approve/approve-flags.js')).APPROVE_HELP,
  },
  {
    name: 'deny',
    summary: ['deny a CertificateRequest (as cmctl deny)'],
    run: async () => (await import('./deny/deny-command.js')).runDeny,
    help: async () => (await import('./deny/deny-flags.js')).DENY_HELP,
  },
  {
    name: 'inspect',
    summary: [
      "describe a TLS Secret's certificate and check its chain and key",
      '(as cmctl inspect secret)',
    ],
    run: async () => (await import('./inspect/inspect-command.js')).runInspect,
    help: async () => (await import('./inspect/inspect-flags.js')).INSPECT_HELP,
  },
  {
    name: 'check',
    summary: ['check that the cert-manager API is ready (as cmctl check api)'],
    run: async () => (await import('./check/check-command.js')).runCheck,
    help: async () => (await import('./check/check-flags.js')).CHECK_HELP,
  },
  {
    name: 'version',
    summary: ['print the version'],
    run: async () => (await import('./version/version-command.js')).runVersion,
    help: async () => (await import('./version/version-command.js')).VERSION_HELP,
  },
];

/** The command of that name, if cert-csi has one. */
export function commandNamed(name: string): CommandEntry | undefined {
  return COMMANDS.find((c) => c.name === name);
}
