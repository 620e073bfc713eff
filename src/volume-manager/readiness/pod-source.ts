import { type Pod, PodKind } from '../../api/pod.js';
import type { PodInfo } from '../../api/volume-spec.js';
import { POD_IPS_KEY } from '../../attributes/attribute-keys.js';
import type { SharedInformers } from '../../controller/shared-informers.js';
import { escapeFieldValue } from '../../store/field-selector.js';
import { resourceNameOf } from '../../store/object-rules.js';
import type { ListOptions } from '../../store/resource-store.js';

/** Where the volume manager reads the pods of its volumes. */
export interface PodSource {
  /**
   * False when a pod can never change while its volume lives (embedded mode: the pod is
   * read from the volume context), so waiting for it would wait forever.
   */
  readonly changes: boolean;
  /** Fills the cache; aborting signal gives up (API down, RBAC missing). */
  start(signal?: AbortSignal): Promise<void>;
  /** The volume's pod as last seen; undefined when not seen (yet, or any more). */
  get(pod: PodInfo, volumeContext: Readonly<Record<string, string>>): Pod | undefined;
  /** Calls listener with the namespace and name of each pod that changes; returns its removal. */
  onChange(listener: (namespace: string | undefined, name: string) => void): () => void;
}

/** The one pod informer's scope of a node plugin: the pods scheduled to this node. */
export function nodePodScope(nodeId: string): [string, ListOptions] {
  return [resourceNameOf(PodKind), { fieldSelector: `spec.nodeName=${escapeFieldValue(nodeId)}` }];
}

/**
 * Pods from the process's Pod informer, scoped to the node (nodePodScope): one list and one
 * watch for the node, never a GET per volume (csi-driver#646). A pod of the same name but
 * another UID (a StatefulSet pod recreated) is not the volume's pod.
 */
export function informerPodSource(informers: SharedInformers): PodSource {
  const informer = informers.informer<Pod>(PodKind);
  return {
    changes: true,
    async start(signal) {
      informer.start();
      await informer.waitForSync(signal);
    },
    get(pod) {
      const found = informer.get(pod.name, pod.namespace);
      if (!found || (pod.uid !== '' && found.metadata.uid !== pod.uid)) return undefined;
      return found;
    },
    onChange(listener) {
      const tell = (pod: Pod) => listener(pod.metadata.namespace, pod.metadata.name);
      const removals = [
        informer.on('add', tell),
        informer.on('update', (_old, pod) => tell(pod)),
        informer.on('delete', tell),
      ];
      return () => {
        for (const remove of removals) remove();
      };
    },
  };
}

/**
 * Pods described by their volume context alone (embedded mode, no kubelet): the IPs of
 * POD_IPS_KEY, no conditions, no annotations; nothing ever changes.
 */
export const contextPodSource: PodSource = {
  changes: false,
  async start() {},
  get(pod, volumeContext) {
    const ips = (volumeContext[POD_IPS_KEY] ?? '')
      .split(',')
      .map((ip) => ip.trim())
      .filter((ip) => ip !== '');
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: pod.name, namespace: pod.namespace, uid: pod.uid },
      status: {
        ...(ips[0] ? { podIP: ips[0] } : {}),
        podIPs: ips.map((ip) => ({ ip })),
      },
    };
  },
  onChange() {
    return () => {};
  },
};
