import { resolve } from 'node:path';
import { type NamespacedName, parseNamespacedName } from '../../api/namespaced-name.js';
import { errorMessage } from '../../base/error-message.js';
import { triggerManualIssuance } from '../../certificates/manual-trigger.js';
import { askCertificateRenew } from '../../volume-manager/control/control-client.js';
import type { CertificateTriggered } from '../../volume-manager/control/control-protocol.js';
import { reportFailure } from '../common/command-failure.js';
import type { CommandOutput } from '../common/command-output.js';
import { usageError } from '../common/command-start.js';
import { controlCall, controlCallFailed } from '../common/control-call.js';
import { KUBE_CLIENT_FLAG_NAMES } from '../common/kube-flags.js';
import { RENEW_COMMAND, type RenewFlags } from '../renew/renew-flags.js';

/**
 * `renew --certificate NAMESPACE/NAME` (cmctl renew): marks the Certificate for issuance,
 * through the embedded plugin of --data-root, or in the cluster of --kubeconfig/--context.
 */
export async function renewCertificate(
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
      return reportFailure(out.stderr, err, 'cert-csi renew', 'renew');
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
  const plugin = await controlCall(out, RENEW_COMMAND, resolve(dataRoot), values.timeout);
  if (typeof plugin === 'number') return plugin;
  try {
    return printTriggered(
      out,
      await askCertificateRenew(plugin.dataRoot, ref, { timeoutMs: plugin.timeoutMs }),
    );
  } catch (err) {
    return controlCallFailed(
      out,
      RENEW_COMMAND,
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
