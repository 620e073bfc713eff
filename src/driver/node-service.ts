import type { Logger } from '../api/logger.js';
import type { VolumePublisher } from '../volume-manager/volume-publisher.js';
import { invalidArgument } from './csi-error.js';
import type { NodePublishVolumeRequest, NodeUnpublishVolumeRequest } from './csi-messages.js';
import { AnswerWithTrailers, type ServiceHandlers } from './csi-server.js';
import { checkPublishRequest, volumeAndTargetProblems } from './publish-request.js';
import { unpublishOutcomeTrailers } from './unpublish-outcome.js';

export interface NodeServiceOptions {
  nodeId: string;
  publisher: VolumePublisher;
  logger: Logger;
}

/** The CSI Node service: publish and unpublish volumes, node id and capabilities. */
export function nodeServiceHandlers(options: NodeServiceOptions): ServiceHandlers {
  const { publisher, logger } = options;
  return {
    NodeGetInfo: () => ({ node_id: options.nodeId }),
    // VOLUME_MOUNT_GROUP makes kubelet pass the pod's fsGroup instead of chowning itself.
    NodeGetCapabilities: () => ({
      capabilities: [{ rpc: { type: 'VOLUME_MOUNT_GROUP' } }],
    }),
    NodePublishVolume: async (call: NodePublishVolumeRequest) => {
      const checked = checkPublishRequest(call);
      const { request } = checked;
      const log = logger.child({
        volumeId: request.volumeId,
        pod: `${request.spec.pod.namespace}/${request.spec.pod.name}`,
      });
      if (checked.deprecatedKeys.length > 0) {
        log.warn(
          { keys: checked.deprecatedKeys },
          'volume attributes use the deprecated prefix csi.certmanager.k8s.io/; use csi.cert-manager.io/',
        );
      }
      // A failed publish's error reaches the client with the gRPC status of its kind.
      const result = await publisher.publish(request);
      log.info(
        {
          issued: result.issued,
          notAfter: result.notAfter?.toISOString(),
          nextIssuanceTime: result.nextIssuanceTime?.toISOString(),
          ...(result.waiting ? { waiting: result.waiting } : {}),
        },
        'volume published',
      );
      return {};
    },
    NodeUnpublishVolume: async (call: NodeUnpublishVolumeRequest) => {
      const problems = volumeAndTargetProblems(call.volume_id, call.target_path);
      if (problems.length > 0) throw invalidArgument(problems.join('; '));
      const outcome = await publisher.unpublish(call.volume_id, call.target_path);
      if (outcome.kind === 'unpublished') {
        logger.info({ volumeId: call.volume_id }, 'volume unpublished');
      } else if (outcome.kind === 'not-published') {
        logger.info({ volumeId: call.volume_id }, 'unpublish of a volume this node does not have');
      }
      // OK for kubelet whatever was done; the trailers tell the CLI.
      return new AnswerWithTrailers({}, unpublishOutcomeTrailers(outcome));
    },
  };
}
