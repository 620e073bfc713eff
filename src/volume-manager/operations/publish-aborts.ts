import { errorMessage } from '../../base/error-message.js';
import { IssuanceError } from '../issuance/issuance-error.js';
import type { VolumeState } from '../state/volume-registry.js';

// How a publish ends when an unpublish of its volume (or the plugin's stop) overtakes it: as
// aborted, which kubelet retries if the pod still wants the volume.

/** A publish that met an unpublish of its volume (kubelet retries it if the pod still wants it). */
export function unpublishingError(): IssuanceError {
  return new IssuanceError('publish aborted: the volume is being unpublished', 'aborted');
}

/** Ends a publish whose volume was unpublished (or the plugin stopped) before this step. */
export function throwIfUnpublished(state: VolumeState): void {
  if (state.abort.signal.aborted) throw abortedError(state);
}

/** The aborted publish's error; the issuance's own abort error says what it was waiting for: kept. */
export function abortedError(state: VolumeState, cause?: unknown): IssuanceError {
  if (cause instanceof IssuanceError && cause.reason === 'aborted') return cause;
  return new IssuanceError(
    `publish aborted: ${errorMessage(state.abort.signal.reason)}`,
    'aborted',
  );
}
