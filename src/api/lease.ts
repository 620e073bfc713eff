import type { KubeObject, ResourceKind } from './meta.js';

export const LeaseKind: ResourceKind = {
  group: 'coordination.k8s.io',
  version: 'v1',
  kind: 'Lease',
  plural: 'leases',
  namespaced: true,
};

/** A coordination.k8s.io/v1 Lease: leader election's shared record. Times are RFC 3339 with microseconds. */
export interface Lease extends KubeObject {
  spec: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}
