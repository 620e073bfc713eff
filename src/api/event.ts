import type { KubeObject } from './meta.js';

export type EventType = 'Normal' | 'Warning';

/** Records what happened to an object, as Kubernetes Events do for `kubectl describe`. */
export interface EventRecorder {
  event(object: KubeObject, type: EventType, reason: string, message: string): void;
}

/** A recorder that drops everything. */
export const discardEvents: EventRecorder = { event: () => {} };
