import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { errorMessage } from '../../base/error-message.js';
import { DataRoot } from '../../volume/data-root.js';
import { askStatus, type ControlError } from '../../volume-manager/control/control-client.js';
import { reportFailure } from '../common/command-failure.js';
import { type CommandOutput, processOutput } from '../common/command-output.js';
import { startCommand, usageError } from '../common/command-start.js';
import { flagDuration, flagTimeout } from '../common/flag-values.js';
import { KUBE_CLIENT_FLAG_NAMES } from '../common/kube-flags.js';
import { PluginCallError } from '../common/plugin-call-error.js';
import { type ApiCheckStore, checkClusterApi, pollUntilReady } from './api-check.js';
import { CHECK_COMMAND } from './check-flags.js';

/** How long one embedded check waits for the plugin's answer. */
const PLUGIN_ANSWER_MS = 10_000;

/** `cert-csi check api` (cmctl check api): is the cert-manager API ready? */
export async function runCheck(
  args: string[],
  out: CommandOutput = processOutput,
): Promise<number> {
  const started = startCommand(args, out, CHECK_COMMAND);
  if (typeof started === 'number') return started;
  const { values, explicit, positionals } = started;
  if (positionals.length !== 1 || positionals[0] !== 'api') {
    return usageError(out, CHECK_COMMAND, 'what to check: cert-csi check api');
  }
  let waitMs: number;
  let intervalMs: number;
  try {
    waitMs = flagDuration('--wait', values.wait, true);
    intervalMs = flagTimeout('--interval', values.interval);
  } catch (err) {
    return usageError(out, CHECK_COMMAND, errorMessage(err));
  }
  const inCluster = values.kubeconfig !== undefined || values.context !== undefined;
  const dataRoot = values['data-root'];
  if (inCluster === (dataRoot !== undefined)) {
    return usageError(
      out,
      CHECK_COMMAND,
      'give --kubeconfig FILE (a cluster) or --data-root DIR (the embedded plugin), one of them',
    );
  }
  let check: () => Promise<void>;
  if (dataRoot === undefined) {
    let store: ApiCheckStore;
    try {
      // client-node costs ~0.6 s to load: only the cluster form pays for it.
      store = (await import('../common/cluster-store.js')).clusterStore(values);
    } catch (err) {
      return usageError(out, CHECK_COMMAND, errorMessage(err));
    }
    check = () => checkClusterApi(store, values.namespace);
  } else {
    for (const flag of [...KUBE_CLIENT_FLAG_NAMES, 'namespace']) {
      if (explicit.has(flag)) {
        return usageError(
          out,
          CHECK_COMMAND,
          `--${flag}: only used with --kubeconfig or --context`,
        );
      }
    }
    const root = new DataRoot(resolve(dataRoot));
    check = async () => {
      try {
        await askStatus(root, { timeoutMs: PLUGIN_ANSWER_MS });
      } catch (err) {
        // askStatus throws ControlError only.
        const failed = err as ControlError;
        throw new PluginCallError(
          `no plugin answers at ${failed.socketPath} (${failed.detail}): is cert-csi node running with --data-root ${root.root}?`,
        );
      }
    };
  }
  try {
    await pollUntilReady(check, {
      waitMs,
      intervalMs,
      now: () => Date.now(),
      sleep: (ms) => sleep(ms),
    });
  } catch (err) {
    return reportFailure(out.stderr, err, 'cert-csi check api: not ready', 'check');
  }
  out.stdout.write('The cert-manager API is ready\n');
  return 0;
}
