import { resolve } from 'node:path';
import { errorMessage } from '../../base/error-message.js';
import { validateVolumeId } from '../../volume/volume-id.js';
import { askRenew } from '../../volume-manager/control/control-client.js';
import type { RenewOutcome, RenewTarget } from '../../volume-manager/control/control-protocol.js';
import type { CommandOutput } from '../common/command-output.js';
import { usageError } from '../common/command-start.js';
import { controlCall, controlCallFailed } from '../common/control-call.js';
import { KUBE_CLIENT_FLAG_NAMES } from '../common/kube-flags.js';
import { RENEW_COMMAND, type RenewFlags } from './renew-flags.js';

/** `renew --volume-id ID` or `renew --all`: the plugin of --data-root renews now; a line per volume. */
export async function renewVolumes(
  { values, explicit }: RenewFlags,
  out: CommandOutput,
): Promise<number> {
  // The flags that say how to reach a cluster; only `--certificate` goes to one.
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
  const plugin = await controlCall(out, RENEW_COMMAND, root, values.timeout);
  if (typeof plugin === 'number') return plugin;
  let outcome: RenewOutcome;
  try {
    outcome = await askRenew(plugin.dataRoot, target, {
      timeoutMs: plugin.timeoutMs,
      onProgress: (done) => printOutcome(out, done),
    });
  } catch (err) {
    return controlCallFailed(
      out,
      RENEW_COMMAND,
      err,
      plugin,
      'the renewal may still complete (see cert-csi status)',
    );
  }
  if (outcome.renewed.length === 0 && outcome.failed.length === 0) {
    out.stdout.write('no volumes to renew\n');
  }
  return outcome.failed.length === 0 ? 0 : 1;
}

// One line per volume.
function printOutcome(out: CommandOutput, outcome: RenewOutcome): void {
  for (const r of outcome.renewed) {
    const next = r.nextIssuanceTime === undefined ? '' : `, next renewal ${r.nextIssuanceTime}`;
    out.stdout.write(`renewed ${r.volumeId}: not after ${r.notAfter}${next}\n`);
  }
  for (const f of outcome.failed) out.stdout.write(`failed ${f.volumeId}: ${f.error}\n`);
}
