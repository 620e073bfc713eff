import type { Metadata } from '@grpc/grpc-js';
import { CsiClient } from '../../driver/csi-client.js';
import { parseEndpoint } from '../../driver/endpoint.js';
import { readUnpublishOutcome } from '../../driver/unpublish-outcome.js';
import type { UnpublishOutcome } from '../../volume-manager/volume-publisher.js';
import { type CommandOutput, processOutput } from '../common/command-output.js';
import { ranOut, reportRpcError, requireCallFlags } from '../common/csi-call.js';
import { parseFlags } from '../common/flag-table.js';
import { UNPUBLISH_FLAGS, UNPUBLISH_HELP } from './unpublish-flags.js';

/** `cert-csi unpublish`: NodeUnpublishVolume from the command line. */
export async function runUnpublish(
  args: string[],
  out: CommandOutput = processOutput,
): Promise<number> {
  const { values } = parseFlags(UNPUBLISH_FLAGS, args);
  if (values.help) {
    out.stdout.write(UNPUBLISH_HELP);
    return 0;
  }
  const { endpoint, target, timeoutMs } = requireCallFlags(values, UNPUBLISH_HELP);
  const volumeId = values['volume-id'] ?? '';
  const client = new CsiClient(parseEndpoint(endpoint));
  const started = Date.now();
  let trailers: Metadata;
  try {
    ({ trailers } = await client.nodeCallWithTrailers(
      'NodeUnpublishVolume',
      { volume_id: volumeId, target_path: target },
      { timeoutMs },
    ));
  } catch (err) {
    return reportRpcError(out, err, ranOut(started, timeoutMs) ? values.timeout : undefined);
  } finally {
    client.close();
  }
  return reportUnpublished(out, volumeId, target, readUnpublishOutcome(trailers));
}

/** The exit status of an unpublish that did nothing (see UNPUBLISH_HELP). */
export const NOTHING_UNPUBLISHED_EXIT = 3;

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
