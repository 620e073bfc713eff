import type { KubeObject, ResourceKind } from './meta.js';

export const KubeEventKind: ResourceKind = {
  group: '',
  version: 'v1',
  kind: 'Event',
  plural: 'events',
  namespaced: true,
};

/** A core/v1 Event, as `kubectl describe` shows it under the object it is about. */
export interface KubeEvent extends KubeObject {
  involvedObject: {
    apiVersion: string;
    kind: string;
    name: string;
    namespace?: string;
    uid?: string;
  };
  reason: string;
  message: string;
  type: 'Normal' | 'Warning';
  source?: { component?: string; host?: string };
  firstTimestamp?: string;
  lastTimestamp?: string;
  count?: number;
  reportingComponent?: string;
  reportingInstance?: string;
}
