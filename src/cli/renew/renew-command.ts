import { resolve } from 'node:path';
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
import { type CommandOutput, processOutput } from '../common/command-output.js';
import { startCommand, usageError } from '../common/command-start.js';
import { flagTimeout } from '../common/flag-values.js';
import { isDirectory } from '../common/is-directory.js';
import { KUBE_CLIENT_FLAG_NAMES } from '../common/kube-flags.js';
import { RENEW_COMMAND, type RenewFlags } from './renew-flags.js';

/** `cert-csi renew`: asks the plugin serving the data root to renew now, and reports the outcome. */
export async function runRenew(
  args: string[],
  out: CommandOutput = processOutput,
): Promise<number> {
  const started = startCommand(args, out, RENEW_COMMAND);
  if (typeof started === 'number') return started;
  const { values, explicit } = started;
  if (values.certificate !== undefined) return renewCertificate(started, out);
  for (const flag of KUBE_CLIENT_FLAG_NAMES) {
    if (explicit.has(flag)) {
      return usageError(out, RENEW_COMMAND, `--${flag}: only used with --certificate`);
    }
  }
  const dataRoot = values['data-root'];
  if (!dataRoot) return usageError(out, RENEW_COMMAND, '--data-root is required');
  // Absolute, so every message names the same directory the plugin's logs do.
  const root = resolve(dataRoot);
  const volumeId = values['volume-id'];
  if ((volumeId === undefined) === (values.all !== true)) {
    return usageError(out, RENEW_COMMAND, 'give either --volume-id ID or --all');
  }
  let target: RenewTarget;
  if (volumeId === undefined) {
    target = { all: true };
  } else {
    try {
      validateVolumeId(volumeId);
    } catch (err) {
      return usageError(out, RENEW_COMMAND, errorMessage(err));
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

/** `renew --certificate`: through the embedded plugin of --data-root, or in a cluster. */
async function renewCertificate(
  { values, explicit }: RenewFlags,
  out: CommandOutput,
): Promise<number> {
  if (values['volume-id'] !== undefined || values.all) {
    return usageError(out, RENEW_COMMAND, 'give one of --certificate, --volume-id or --all');
  }
  let ref: NamespacedName;
  try {
    ref = parseNamespacedName(values.certificate ?? '');
  } catch (err) {
    return usageError(out, RENEW_COMMAND, `--certificate: ${errorMessage(err)}`);
  }
  const inCluster = values.kubeconfig !== undefined || values.context !== undefined;
  const dataRoot = values['data-root'];
  if (inCluster && dataRoot) {
    return usageError(
      out,
      RENEW_COMMAND,
      '--data-root and --kubeconfig/--context name two places: give --data-root for an embedded plugin, --kubeconfig (or --context) for a cluster',
    );
  }
  if (inCluster) {
    if (explicit.has('timeout')) {
      return usageError(out, RENEW_COMMAND, '--timeout: only used with --data-root');
    }
    let store: Awaited<ReturnType<typeof clusterStoreOf>>;
    try {
      store = await clusterStoreOf(values);
    } catch (err) {
      return usageError(out, RENEW_COMMAND, errorMessage(err));
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
      RENEW_COMMAND,
      '--certificate needs --data-root DIR (a Certificate of the embedded plugin) or --kubeconfig FILE (a Certificate in a cluster)',
    );
  }
  for (const flag of KUBE_CLIENT_FLAG_NAMES) {
    if (explicit.has(flag)) {
      return usageError(out, RENEW_COMMAND, `--${flag}: only used with --kubeconfig or --context`);
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
async function clusterStoreOf(values: RenewFlags['values']) {
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
    return usageError(out, RENEW_COMMAND, errorMessage(err));
  }
  if (!(await isDirectory(root))) {
    // The plugin creates it at start: without it, no plugin ever used this data root.
    return usageError(
      out,
      RENEW_COMMAND,
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

// One line per volume.
function printOutcome(out: CommandOutput, outcome: RenewOutcome): void {
  for (const r of outcome.renewed) {
    const next = r.nextIssuanceTime === undefined ? '' : `, next renewal ${r.nextIssuanceTime}`;
    out.stdout.write(`renewed ${r.volumeId}: not after ${r.notAfter}${next}\n`);
  }
  for (const f of outcome.failed) out.stdout.write(`failed ${f.volumeId}: ${f.error}\n`);
}
