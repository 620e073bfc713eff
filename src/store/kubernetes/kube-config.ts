import { errorMessage } from '../../base/error-message.js';
import { KubeConfig } from './client-node.js';

export interface KubeConfigFlags {
  /** A kubeconfig file; without it: in-cluster when running in a pod, else client-node's default search. */
  kubeconfig?: string;
  context?: string;
}

/**
 * Loads how to reach the API server: the --kubeconfig file, else the pod's service account
 * (KUBERNETES_SERVICE_HOST set), else $KUBECONFIG or ~/.kube/config. Throws naming what is
 * missing, rather than falling back to an unauthenticated localhost:8080.
 */
export function loadKubeConfig(flags: KubeConfigFlags): KubeConfig {
  const config = new KubeConfig();
  if (flags.kubeconfig) {
    try {
      config.loadFromFile(flags.kubeconfig);
    } catch (err) {
      throw new Error(`--kubeconfig ${flags.kubeconfig}: ${errorMessage(err)}`);
    }
  } else if (process.env.KUBERNETES_SERVICE_HOST) {
    config.loadFromCluster();
  } else {
    config.loadFromDefault();
  }
  if (flags.context) {
    if (!config.getContextObject(flags.context)) {
      const known = config.getContexts().map((c) => c.name);
      throw new Error(
        `--context ${flags.context}: no such context (known: ${known.join(', ') || 'none'})`,
      );
    }
    config.setCurrentContext(flags.context);
  }
  const cluster = config.getCurrentCluster();
  if (!cluster) {
    throw new Error(
      'no Kubernetes cluster configured: pass --kubeconfig, set KUBECONFIG, or run in a pod',
    );
  }
  return config;
}

/** The same cluster as base, authenticated with a bearer token instead of base's user. */
export function kubeConfigWithToken(base: KubeConfig, token: string): KubeConfig {
  const cluster = base.getCurrentCluster();
  if (!cluster) throw new Error('no Kubernetes cluster configured');
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [cluster],
    users: [{ name: 'pod-service-account', token }],
    contexts: [{ name: 'pod', cluster: cluster.name, user: 'pod-service-account' }],
    currentContext: 'pod',
  });
  return config;
}
