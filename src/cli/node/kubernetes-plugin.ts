import type { KubeConfig } from '@kubernetes/client-node';
import { emptyAudienceToken } from '../../attributes/service-account-token.js';
import { systemClock } from '../../base/clock.js';
import { EventWriter } from '../../controller/event-writer.js';
import { SharedInformers } from '../../controller/shared-informers.js';
import { kubeConfigWithToken } from '../../store/kubernetes/kube-config.js';
import { KubernetesStore } from '../../store/kubernetes/kubernetes-store.js';
import type { DataRoot } from '../../volume/data-root.js';
import { nodeRequestScope } from '../../volume-manager/issuance/request-tracker.js';
import { informerPodSource, nodePodScope } from '../../volume-manager/readiness/pod-source.js';
import { issuanceFailureEvent } from '../../volume-manager/telemetry/failure-event.js';
import type { VolumeManager } from '../../volume-manager/volume-manager.js';
import { type NodePluginOptions, startNodeServices } from './node-services.js';

export interface KubernetesPluginOptions extends NodePluginOptions {
  kubeConfig: KubeConfig;
  qps: number;
  burst: number;
  /** The limit of one API request (KubernetesStore's default when unset). */
  requestTimeoutMs?: number;
  /** Create each CertificateRequest with the pod's own service-account token. */
  useTokenRequest: boolean;
}

/** A running cluster-mode plugin and the parts tests look at. */
export interface KubernetesPlugin {
  store: KubernetesStore;
  manager: VolumeManager;
  events: EventWriter;
  /** The node's informers: what the node plugin has seen of its requests. */
  informers: SharedInformers;
  dataRoot: DataRoot;
  stop(): Promise<void>;
}

const FIELD_MANAGER = 'cert-csi-node';

/**
 * Wires the cluster mode of the node plugin: the cluster API as the store (this node's
 * CertificateRequests only, through one label-scoped informer), Events on the Pod when an
 * issuance fails, and optionally the pod's own token for creating requests. Signing is
 * left to cert-manager or `cert-csi controller`.
 */
export async function startKubernetesPlugin(
  options: KubernetesPluginOptions,
): Promise<KubernetesPlugin> {
  const { kubeConfig, qps, burst, requestTimeoutMs } = options;
  const { nodeId } = options.settings;
  const limits = {
    qps,
    burst,
    ...(requestTimeoutMs === undefined ? {} : { requestTimeoutMs }),
  };
  const store = new KubernetesStore({
    kubeConfig,
    ...limits,
    fieldManager: FIELD_MANAGER,
    // ClusterTrustBundle sources follow the version the cluster serves; a change is logged.
    logger: options.logger.child({ source: 'store' }),
  });
  const events = new EventWriter({
    store,
    component: FIELD_MANAGER,
    host: nodeId,
    logger: options.logger.child({ source: 'events' }),
  });
  // This node's requests and this node's pods only (readiness gates, ${POD_IP}): one
  // label-scoped and one field-scoped informer, never a GET per volume (the volume manager
  // adds one watch per trust-bundle source its volumes use).
  const informers = new SharedInformers(store, {
    scopes: new Map([...nodeRequestScope(nodeId), nodePodScope(nodeId)]),
    clock: options.clock ?? systemClock,
  });
  let node: Awaited<ReturnType<typeof startNodeServices>>;
  try {
    node = await startNodeServices(options, {
      store,
      informers,
      podSource: informerPodSource(informers),
      onEvent: (event) => events.event(event.pod, event.type, event.reason, event.message),
      onFailed: (volumeId, volumeContext, err) => {
        const event = issuanceFailureEvent(volumeId, volumeContext, err);
        if (event) events.event(event.pod, event.type, event.reason, event.message);
      },
      ...(options.useTokenRequest
        ? {
            requestCreator: (tokens: string | undefined) =>
              new KubernetesStore({
                kubeConfig: kubeConfigWithToken(kubeConfig, emptyAudienceToken(tokens)),
                ...limits,
                fieldManager: FIELD_MANAGER,
              }),
          }
        : {}),
    });
  } catch (err) {
    informers.stop();
    throw err;
  }
  return {
    store,
    manager: node.manager,
    events,
    informers,
    dataRoot: node.dataRoot,
    async stop() {
      await node.stop();
      informers.stop();
      await events.flush();
    },
  };
}
