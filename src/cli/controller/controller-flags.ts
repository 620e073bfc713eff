import type { ParseArgsConfig } from 'node:util';
import {
  DEFAULT_CLUSTER_RESOURCE_NAMESPACE,
  DEFAULT_TRUST_DOMAIN,
} from '../../issuer/stack-config.js';
import { LOG_LEVELS } from '../../observability/logger.js';
import { KUBE_CLIENT_HELP, KUBE_CLIENT_OPTIONS } from '../common/kube-flags.js';
import { OBSERVABILITY_HELP, OBSERVABILITY_OPTIONS } from '../common/observability-flags.js';
import { CONTROLLERS_HELP } from './controller-names.js';

export const CONTROLLER_DEFAULTS = {
  leaderElectionNamespace: 'cert-csi',
  leaderElectionId: 'cert-csi-controller',
  leaseDuration: '15s',
  renewDeadline: '10s',
  retryPeriod: '2s',
  logLevel: 'info',
  signingWorkers: '4',
  podCertificateMaxDuration: '720h',
} as const;

/** The flags of `cert-csi controller`, as node:util parseArgs options (the manifests test reads them). */
export const CONTROLLER_OPTIONS = {
  ...KUBE_CLIENT_OPTIONS,
  'cluster-resource-namespace': { type: 'string', default: DEFAULT_CLUSTER_RESOURCE_NAMESPACE },
  'leader-elect': { type: 'string', default: 'true' },
  'leader-election-namespace': {
    type: 'string',
    default: CONTROLLER_DEFAULTS.leaderElectionNamespace,
  },
  'leader-election-id': { type: 'string', default: CONTROLLER_DEFAULTS.leaderElectionId },
  'leader-election-lease-duration': { type: 'string', default: CONTROLLER_DEFAULTS.leaseDuration },
  'leader-election-renew-deadline': { type: 'string', default: CONTROLLER_DEFAULTS.renewDeadline },
  'leader-election-retry-period': { type: 'string', default: CONTROLLER_DEFAULTS.retryPeriod },
  identity: { type: 'string' },
  controllers: { type: 'string', multiple: true },
  'disable-approval': { type: 'boolean', default: false },
  'signing-workers': { type: 'string', default: CONTROLLER_DEFAULTS.signingWorkers },
  'trust-domain': { type: 'string', default: DEFAULT_TRUST_DOMAIN },
  'pod-certificate-max-duration': {
    type: 'string',
    default: CONTROLLER_DEFAULTS.podCertificateMaxDuration,
  },
  ...OBSERVABILITY_OPTIONS,
  'log-level': { type: 'string', default: CONTROLLER_DEFAULTS.logLevel },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

export const CONTROLLER_HELP = `Usage: cert-csi controller [flags]

Runs the controller stack against a Kubernetes cluster: the issuer controllers
(approver, CA and SelfSigned CertificateRequest signers, Issuer and ClusterIssuer
readiness), cert-manager's Certificate controllers (trigger, key-manager,
request-manager, issuing, readiness, revision-manager), and the signer of
Kubernetes PodCertificateRequests with its ClusterTrustBundles (when the cluster
serves them). Only the holder of the leader-election Lease works; the others
wait to take over.

Flags:
${KUBE_CLIENT_HELP}  --cluster-resource-namespace NS  namespace of ClusterIssuer Secrets
                                 (default ${DEFAULT_CLUSTER_RESOURCE_NAMESPACE})
  --leader-elect true|false      elect a leader on a Lease (default true)
  --leader-election-namespace NS namespace of the Lease (default ${CONTROLLER_DEFAULTS.leaderElectionNamespace})
  --leader-election-id NAME      name of the Lease (default ${CONTROLLER_DEFAULTS.leaderElectionId})
  --leader-election-lease-duration DURATION
                                 how long a lease lasts without renewal (default ${CONTROLLER_DEFAULTS.leaseDuration})
  --leader-election-renew-deadline DURATION
                                 the leader gives up when it cannot renew within this
                                 (default ${CONTROLLER_DEFAULTS.renewDeadline})
  --leader-election-retry-period DURATION
                                 how often to try to acquire or renew (default ${CONTROLLER_DEFAULTS.retryPeriod})
  --identity NAME                this replica's name in the Lease (default: the hostname
                                 and a random suffix)
${CONTROLLERS_HELP}  --disable-approval             do not approve requests; leave it to another approver
                                 (cert-manager's, approver-policy): the same as
                                 --controllers=*,-certificaterequests-approver
  --signing-workers N            requests signed at once (default ${CONTROLLER_DEFAULTS.signingWorkers})
  --trust-domain NAME            trust domain of the SPIFFE ID in pod certificates
                                 (default ${DEFAULT_TRUST_DOMAIN})
  --pod-certificate-max-duration DURATION
                                 longest pod certificate, at least 1h; a request may ask
                                 for less (default ${CONTROLLER_DEFAULTS.podCertificateMaxDuration})
${OBSERVABILITY_HELP}  --log-level LEVEL              ${LOG_LEVELS.join(', ')} (default ${CONTROLLER_DEFAULTS.logLevel})
  -h, --help                     show this help
`;
