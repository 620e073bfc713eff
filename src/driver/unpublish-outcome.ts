import { Metadata } from '@grpc/grpc-js';
import type { UnpublishOutcome } from '../volume-manager/volume-publisher.js';

// NodeUnpublishVolume answers success whatever it did (CSI: unpublish is idempotent, and
// kubelet must get OK), and its response message has no field to say more. The plugin tells
// what it did in a trailing metadata entry of that answer, which kubelet ignores and
// `cert-csi unpublish` reads: the answer of the very call, so nothing can change in between.

/** The trailing-metadata key of the outcome; `-bin`, so its value is bytes and any path fits. */
export const UNPUBLISH_OUTCOME_KEY = 'cert-csi-unpublish-outcome-bin';

// kubelet's target paths are ~150 characters; the end of a longer one names its pod and volume.
const RECORDED_TARGET_MAX_CHARACTERS = 1024;
// What the reader accepts: the largest outcome the writer makes, with room for UTF-8.
const OUTCOME_MAX_BYTES = 8 * 1024;

/** The trailers of an unpublish's answer that carry its outcome. */
export function unpublishOutcomeTrailers(outcome: UnpublishOutcome): Metadata {
  const sent =
    outcome.kind === 'elsewhere' && outcome.recordedTarget.length > RECORDED_TARGET_MAX_CHARACTERS
      ? {
          ...outcome,
          recordedTarget: `…${outcome.recordedTarget.slice(-RECORDED_TARGET_MAX_CHARACTERS)}`,
        }
      : outcome;
  const trailers = new Metadata();
  trailers.set(UNPUBLISH_OUTCOME_KEY, Buffer.from(JSON.stringify(sent)));
  return trailers;
}

/**
 * The outcome a plugin sent with its unpublish answer; undefined when it sent none, or none
 * that is well formed (a CSI plugin other than cert-csi).
 */
export function readUnpublishOutcome(trailers: Metadata): UnpublishOutcome | undefined {
  const [value] = trailers.get(UNPUBLISH_OUTCOME_KEY);
  if (!Buffer.isBuffer(value) || value.length > OUTCOME_MAX_BYTES) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value.toString('utf8'));
  } catch {
    return undefined;
  }
  const { kind, recordedTarget } = (parsed ?? {}) as Record<string, unknown>;
  if (kind === 'unpublished' || kind === 'not-published') return { kind };
  if (kind === 'elsewhere' && typeof recordedTarget === 'string') return { kind, recordedTarget };
  return undefined;
}
