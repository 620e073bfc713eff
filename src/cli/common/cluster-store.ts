import { loadKubeConfig } from '../../store/kubernetes/kube-config.js';
import { KubernetesStore } from '../../store/kubernetes/kubernetes-store.js';
import { kubeClientFlags } from './kube-flags.js';

/** Who writes, in managedFields, when a person runs a cert-csi command against the cluster. */
const FIELD_MANAGER = 'cert-csi';

/**
 * The cluster of --kubeconfig and --context, as a store, for the commands a person runs
 * (`renew --certificate`, `status --certificate`). Throws naming the flag when one is bad or
 * the kubeconfig cannot be loaded. Load this module on demand: client-node costs ~0.6 s.
 */
export function clusterStore(values: {
  kubeconfig?: string | undefined;
  context?: string | undefined;
  'kube-api-qps': string;
  'kube-api-burst': string;
  'kube-api-timeout': string;
}): KubernetesStore {
  const rate = kubeClientFlags(values);
  const kubeConfig = loadKubeConfig({
    ...(values.kubeconfig ? { kubeconfig: values.kubeconfig } : {}),
    ...(values.context ? { context: values.context } : {}),
  });
  return new KubernetesStore({ kubeConfig, ...rate, fieldManager: FIELD_MANAGER });
}
