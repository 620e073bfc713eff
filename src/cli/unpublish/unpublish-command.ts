import type { Metadata } from '@grpc/grpc-js';
import { errorMessage } from '../../base/error-message.js';
import { CsiClient } from '../../driver/csi-client.js';
import { readUnpublishOutcome } from '../../driver/unpublish-outcome.js';
import type { UnpublishOutcome } from '../../volume-manager/volume-publisher.js';
import { type CommandOutput, processOutput } from '../common/command-output.js';
import { startCommand, usageError } from '../common/command-start.js';
import { ranOut, reportRpcError, requireCallFlags } from '../common/csi-call.js';
import { NOTHING_UNPUBLISHED_EXIT, UNPUBLISH_COMMAND } from './unpublish-flags.js';

export { NOTHING_UNPUBLISHED_EXIT };

/** `cert-csi unpublish`: NodeUnpublishVolume from the command line. */
export async function runUnpublish(
  args: string[],
  out: CommandOutput = processOutput,
): Promise<number> {
  const started = startCommand(args, out, UNPUBLISH_COMMAND);
  if (typeof started === 'number') return started;
  const { values } = started;
  let call: ReturnType<typeof requireCallFlags>;
  try {
    call = requireCallFlags(values);
  } catch (err) {
    // requireCallFlags throws UsageErrors only.
    return usageError(out, UNPUBLISH_COMMAND, errorMessage(err));
  }
  const { endpoint, target, timeoutMs } = call;
  const volumeId = values['volume-id'] as string;
  const client = new CsiClient(endpoint);
  const callStarted = Date.now();
  let trailers: Metadata;
  try {
    ({ trailers } = await client.nodeCallWithTrailers(
      'NodeUnpublishVolume',
      { volume_id: volumeId, target_path: target },
      { timeoutMs },
    ));
  } catch (err) {
    return reportRpcError(out, UNPUBLISH_COMMAND.name, err, {
      endpoint: values.endpoint as string,
      volumeId,
      timedOutAfter: ranOut(callStarted, timeoutMs) ? values.timeout : undefined,
    });
  } finally {
    client.close();
  }
  return reportUnpublished(out, volumeId, target, readUnpublishOutcome(trailers));
}

// What the plugin said it did, from the trailers of its answer (read by the same call, so
// nothing can change in between); exit 0 only when something was unpublished.
function reportUnpublished(
  out: CommandOutput,
  volumeId: string,
  target: string,
  outcome: UnpublishOutcome | undefined,
): number {
  switch (outcome?.kind) {
    case 'unpublished':
      out.stdout.write(`unpublished ${volumeId} from ${target}\n`);
      return 0;
    case 'elsewhere':
      out.stderr.write(
        `nothing unpublished: volume ${volumeId} is published at ${outcome.recordedTarget}, not at ${target}\n`,
      );
      return NOTHING_UNPUBLISHED_EXIT;
    case 'not-published':
      out.stderr.write(`nothing unpublished: volume ${volumeId} is not published on this node\n`);
      return NOTHING_UNPUBLISHED_EXIT;
    default:
      // A CSI plugin other than cert-csi: its success is all there is to know.
      out.stdout.write(
        `the plugin answered success for ${volumeId} at ${target} (it does not say whether anything was unpublished)\n`,
      );
      return 0;
  }
}
