import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { type NamespacedName, parseNamespacedName } from '../../api/namespaced-name.js';
import { errorMessage } from '../../base/error-message.js';
import { triggerManualIssuance } from '../../certificates/manual-trigger.js';
import { DataRoot } from '../../volume/data-root.js';
import { validateVolumeId } from '../../volume/volume-id.js';
import {
  askCertificateRenew,
  askRenew,
  ControlError,
} from '../../volume-manager/control/control-client.js';
import type {
  CertificateTriggered,
  RenewOutcome,
  RenewTarget,
} from '../../volume-manager/control/control-protocol.js';
import {
  type CommandOutput,
  isDirectory,
  processOutput,
  startCommand,
  usageError,
} from '../common/data-root-command.js';
import { flagTimeout } from '../common/flag-values.js';
import { KUBE_CLIENT_HELP, KUBE_CLIENT_OPTIONS } from '../common/kube-flags.js';

// Longer than one issuance attempt's deadline (60 s), so a renewal that runs into it is reported.
const DEFAULT_TIMEOUT = '2m';

export const RENEW_HELP = `Usage: cert-csi renew --data-root DIR (--volume-id ID | --all) [--timeout DURATION]
       cert-csi renew --certificate NAMESPACE/NAME --data-root DIR [--timeout DURATION]
       cert-csi renew --certificate NAMESPACE/NAME --kubeconfig FILE [--context NAME]

Makes a running plugin renew now, whatever the renewal time, and waits until the new
certificate is written. The request goes over the unix socket DIR/..control.sock, which
the plugin serves; no plugin answering there fails at once. One line is printed per
volume, as soon as that volume is done (with --all, while the others are still renewing).

With --certificate, marks a cert-manager Certificate for issuance now, as "cmctl renew"
does: its Issuing condition becomes True with reason ManuallyTriggered and message
"Certificate re-issuance manually triggered" (observedGeneration = its generation, the
other conditions kept), written with a status update; a conflicting write is retried on
a fresh read. The Certificate controllers then issue it, whatever the renewal time and
any failure backoff. It prints "Manually triggered issuance of Certificate NAMESPACE/NAME".
A Certificate already issuing goes on with the issuance in progress (none is added): the
condition keeps its transition time, takes the new reason and message, and a note says so
on stderr.
  with --data-root DIR: a Certificate of the embedded plugin running with that data root;
    the request goes through DIR/..control.sock and the plugin, which owns the store,
    writes it.
  with --kubeconfig FILE or --context NAME: a Certificate in that cluster, written directly.

Exit codes: 0 every volume renewed, or the Certificate marked; 1 a renewal failed, the
Certificate does not exist or could not be written, or no plugin answered (none runs with
this data root, or it did not answer within --timeout); 2 bad flags (a malformed
NAMESPACE/NAME, an unusable kubeconfig), or the data root does not exist (no plugin ever
ran with it).

Flags:
  --data-root DIR                the plugin's --data-root
  --volume-id ID                 the volume to renew (cert-csi status lists them)
  --all                          renew every volume of this node
  --certificate NAMESPACE/NAME   the Certificate to mark for issuance
  --timeout DURATION             how long to wait for the plugin's answer, Go syntax
                                 (default ${DEFAULT_TIMEOUT})
  -h, --help                     show this help

Cluster, with --certificate:
${KUBE_CLIENT_HELP}`;

/** `cert-csi renew`: asks the plugin serving the data root to renew now, and reports the outcome. */
export async function runRenew(
  args: string[],
  out: CommandOutput = processOutput,
): Promise<number> {
  const started = startCommand(args, out, renewCommand);
  if (typeof started === 'number') return started;
  const { values } = started;
  if (values.certificate !== undefined) return renewCertificate(values, out);
  for (const flag of CLUSTER_FLAGS) {
    if (values.explicit.has(flag)) {
      return usageError(out, renewCommand, `--${flag}: only used with --certificate`);
    }
  }
  const dataRoot = values['data-root'];
  if (!dataRoot) return usageError(out, renewCommand, '--data-root is required');
  // Absolute, so every message names the same directory the plugin's logs do.
  const root = resolve(dataRoot);
  const volumeId = values['volume-id'];
  if ((volumeId === undefined) === (values.all !== true)) {
    return usageError(out, renewCommand, 'give either --volume-id ID or --all');
  }
  let target: RenewTarget;
  if (volumeId === undefined) {
    target = { all: true };
  } else {
    try {
      validateVolumeId(volumeId);
    } catch (err) {
      return usageError(out, renewCommand, errorMessage(err));
    }
    target = { volumeId };
  }
  const plugin = await pluginOf(out, root, values.timeout);
  if (typeof plugin === 'number') return plugin;
  let outcome: RenewOutcome;
  try {
    outcome = await askRenew(plugin.dataRoot, target, {
      timeoutMs: plugin.timeoutMs,
      onProgress: (done) => printOutcome(out, done),
    });
  } catch (err) {
    return failed(out, err, plugin, 'the renewal may still complete (see cert-csi status)');
  }
  if (outcome.renewed.length === 0 && outcome.failed.length === 0) {
    out.stdout.write('no volumes to renew\n');
  }
  return outcome.failed.length === 0 ? 0 : 1;
}

// The flags that say how to reach a cluster; only `--certificate` goes to one.
const CLUSTER_FLAGS = Object.keys(KUBE_CLIENT_OPTIONS);

type RenewFlags = ReturnType<typeof parseFlags>;

/** `renew --certificate`: through the embedded plugin of --data-root, or in a cluster. */
async function renewCertificate(values: RenewFlags, out: CommandOutput): Promise<number> {
  if (values['volume-id'] !== undefined || values.all) {
    return usageError(out, renewCommand, 'give one of --certificate, --volume-id or --all');
  }
  let ref: NamespacedName;
  try {
    ref = parseNamespacedName(values.certificate ?? '');
  } catch (err) {
    return usageError(out, renewCommand, `--certificate: ${errorMessage(err)}`);
  }
  const inCluster = values.kubeconfig !== undefined || values.context !== undefined;
  const dataRoot = values['data-root'];
  if (inCluster && dataRoot) {
    return usageError(
      out,
      renewCommand,
      '--data-root and --kubeconfig/--context name two places: give --data-root for an embedded plugin, --kubeconfig (or --context) for a cluster',
    );
  }
  if (inCluster) {
    if (values.explicit.has('timeout')) {
      return usageError(out, renewCommand, '--timeout: only used with --data-root');
    }
    let store: Awaited<ReturnType<typeof clusterStoreOf>>;
    try {
      store = await clusterStoreOf(values);
    } catch (err) {
      return usageError(out, renewCommand, errorMessage(err));
    }
    try {
      const { alreadyIssuing } = await triggerManualIssuance(store, ref, () => new Date());
      return printTriggered(out, { ...ref, alreadyIssuing });
    } catch (err) {
      out.stderr.write(`cert-csi renew: ${errorMessage(err)}\n`);
      return 1;
    }
  }
  if (!dataRoot) {
    return usageError(
      out,
      renewCommand,
      '--certificate needs --data-root DIR (a Certificate of the embedded plugin) or --kubeconfig FILE (a Certificate in a cluster)',
    );
  }
  for (const flag of CLUSTER_FLAGS) {
    if (values.explicit.has(flag)) {
      return usageError(out, renewCommand, `--${flag}: only used with --kubeconfig or --context`);
    }
  }
  const plugin = await pluginOf(out, resolve(dataRoot), values.timeout);
  if (typeof plugin === 'number') return plugin;
  try {
    return printTriggered(
      out,
      await askCertificateRenew(plugin.dataRoot, ref, { timeoutMs: plugin.timeoutMs }),
    );
  } catch (err) {
    return failed(
      out,
      err,
      plugin,
      'the Certificate may yet be marked (see cert-csi status --certificate)',
    );
  }
}

// client-node costs ~0.6 s to load: only the cluster form pays for it.
async function clusterStoreOf(values: RenewFlags) {
  return (await import('../common/cluster-store.js')).clusterStore(values);
}

// cmctl's line on stdout; a note on stderr when the Certificate was issuing already.
function printTriggered(out: CommandOutput, triggered: CertificateTriggered): number {
  const name = `${triggered.namespace}/${triggered.name}`;
  out.stdout.write(`Manually triggered issuance of Certificate ${name}\n`);
  if (triggered.alreadyIssuing) {
    out.stderr.write(
      `note: Certificate ${name} was already being issued: that issuance goes on, no second one starts\n`,
    );
  }
  return 0;
}

/** The data root of a running plugin, and how long to wait for its answer. */
interface PluginCall {
  root: string;
  dataRoot: DataRoot;
  timeoutMs: number;
  timeoutText: string;
}

/** The call to the plugin of a data root; the exit status when the flags or the data root rule it out. */
async function pluginOf(
  out: CommandOutput,
  root: string,
  timeoutText: string,
): Promise<PluginCall | number> {
  let timeoutMs: number;
  try {
    timeoutMs = flagTimeout('--timeout', timeoutText);
  } catch (err) {
    return usageError(out, renewCommand, errorMessage(err));
  }
  if (!(await isDirectory(root))) {
    // The plugin creates it at start: without it, no plugin ever used this data root.
    return usageError(
      out,
      renewCommand,
      `data root ${root} does not exist or is not a directory: is cert-csi node running with --data-root ${root}?`,
    );
  }
  return { root, dataRoot: new DataRoot(root), timeoutMs, timeoutText };
}

/**
 * Says why the plugin gave no answer, or the error it answered with; exit status 1. stillRunning
 * tells what may yet happen when the plugin took the request. Anything else is thrown again.
 */
function failed(out: CommandOutput, err: unknown, call: PluginCall, stillRunning: string): number {
  if (!(err instanceof ControlError)) throw err;
  const running = `is cert-csi node running with --data-root ${call.root}?`;
  const line = {
    'no-plugin': `cert-csi renew: no plugin answers at ${err.socketPath} (${err.detail}): ${running}`,
    'no-answer': `no answer from the plugin within ${call.timeoutText}: ${running}`,
    late: `the plugin took the request but did not answer within ${call.timeoutText}; ${stillRunning}`,
    lost: `cert-csi renew: no complete answer from the plugin (${err.detail}); ${stillRunning}`,
    refused: `cert-csi renew: ${err.detail}`,
    unreadable: `cert-csi renew: unreadable answer from the plugin: ${err.detail}`,
  }[err.failure];
  out.stderr.write(`${line}\n`);
  return 1;
}

function parseFlags(args: string[]) {
  const { values, tokens } = parseArgs({
    args,
    options: {
      'data-root': { type: 'string' },
      'volume-id': { type: 'string' },
      all: { type: 'boolean' },
      certificate: { type: 'string' },
      timeout: { type: 'string', default: DEFAULT_TIMEOUT },
      ...KUBE_CLIENT_OPTIONS,
      help: { type: 'boolean', short: 'h' },
    },
    tokens: true,
  });
  // The flags given on the command line, defaults aside: some only fit one form.
  const explicit = new Set<string>(tokens.flatMap((t) => (t.kind === 'option' ? [t.name] : [])));
  return { ...values, explicit };
}

const renewCommand = { name: 'renew', help: RENEW_HELP, parse: parseFlags };

// One line per volume.
function printOutcome(out: CommandOutput, outcome: RenewOutcome): void {
  for (const r of outcome.renewed) {
    const next = r.nextIssuanceTime === undefined ? '' : `, next renewal ${r.nextIssuanceTime}`;
    out.stdout.write(`renewed ${r.volumeId}: not after ${r.notAfter}${next}\n`);
  }
  for (const f of outcome.failed) out.stdout.write(`failed ${f.volumeId}: ${f.error}\n`);
}
