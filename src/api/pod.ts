import type { KubeObject, ResourceKind } from './meta.js';

export const PodKind: ResourceKind = {
  group: '',
  version: 'v1',
  kind: 'Pod',
  plural: 'pods',
  namespaced: true,
};

/** One of a pod's conditions (Ready, PodScheduled, readiness gates' own types...). */
export interface PodCondition {
  type: string;
  status: string;
}

/** The part of a Pod cert-csi reads: identity, placement, addresses, conditions. */
export interface Pod extends KubeObject {
  spec?: { nodeName?: string; serviceAccountName?: string };
  status?: {
    podIP?: string;
    podIPs?: Array<{ ip: string }>;
    conditions?: PodCondition[];
    /** Each running container's name and runtime id (`containerd://<id>`), for reload signals. */
    containerStatuses?: Array<{ name: string; containerID?: string }>;
  };
}

/**
 * The pod's IPs, first one first: status.podIPs, or status.podIP alone when podIPs is empty
 * (the API server keeps podIP equal to podIPs[0]).
 */
export function podIPsOf(pod: Pod): string[] {
  const listed = (pod.status?.podIPs ?? []).map((entry) => entry.ip).filter((ip) => ip !== '');
  if (listed.length > 0) return listed;
  const single = pod.status?.podIP;
  return single ? [single] : [];
}
