import {
  DEFAULT_CLUSTER_RESOURCE_NAMESPACE,
  DEFAULT_TRUST_DOMAIN,
} from '../../issuer/stack-config.js';
import { LOG_LEVELS } from '../../observability/logger.js';
import { type FlagTable, flagList, flagOptions, HELP_FLAG } from '../common/flag-table.js';
import { KUBE_CLIENT_FLAGS } from '../common/kube-flags.js';
import { OBSERVABILITY_FLAGS } from '../common/observability-flags.js';
import { CONTROLLERS_FLAG } from './controller-names.js';

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

/** The flags of `cert-csi controller`, in the order its help lists them. */
export const CONTROLLER_FLAGS = {
  ...KUBE_CLIENT_FLAGS,
  'cluster-resource-namespace': {
    type: 'string',
    value: 'NS',
    default: DEFAULT_CLUSTER_RESOURCE_NAMESPACE,
    description: `namespace of ClusterIssuer Secrets (default ${DEFAULT_CLUSTER_RESOURCE_NAMESPACE})`,
  },
  'leader-elect': {
    type: 'string',
    value: 'true|false',
    default: 'true',
    description: 'elect a leader on a Lease (default true)',
  },
  'leader-election-namespace': {
    type: 'string',
    value: 'NS',
    default: CONTROLLER_DEFAULTS.leaderElectionNamespace,
    description: `namespace of the Lease (default ${CONTROLLER_DEFAULTS.leaderElectionNamespace})`,
  },
  'leader-election-id': {
    type: 'string',
    value: 'NAME',
    default: CONTROLLER_DEFAULTS.leaderElectionId,
    description: `name of the Lease (default ${CONTROLLER_DEFAULTS.leaderElectionId})`,
  },
  'leader-election-lease-duration': {
    type: 'string',
    value: 'DURATION',
    default: CONTROLLER_DEFAULTS.leaseDuration,
    description: `how long a lease lasts without renewal (default ${CONTROLLER_DEFAULTS.leaseDuration})`,
  },
  'leader-election-renew-deadline': {
    type: 'string',
    value: 'DURATION',
    default: CONTROLLER_DEFAULTS.renewDeadline,
    description: [
      'the leader gives up when it cannot renew within this',
      `(default ${CONTROLLER_DEFAULTS.renewDeadline})`,
    ],
  },
  'leader-election-retry-period': {
    type: 'string',
    value: 'DURATION',
    default: CONTROLLER_DEFAULTS.retryPeriod,
    description: `how often to try to acquire or renew (default ${CONTROLLER_DEFAULTS.retryPeriod})`,
  },
  identity: {
    type: 'string',
    value: 'NAME',
    description: [
      "this replica's name in the Lease (default: the hostname",
      'and a random suffix)',
    ],
  },
  ...CONTROLLERS_FLAG,
  'disable-approval': {
    type: 'boolean',
    default: false,
    description: [
      'do not approve requests; leave it to another approver',
      "(cert-manager's, approver-policy): the same as",
      '--controllers=*,-certificaterequests-approver',
    ],
  },
  'signing-workers': {
    type: 'string',
    value: 'N',
    default: CONTROLLER_DEFAULTS.signingWorkers,
    description: `requests signed at once (default ${CONTROLLER_DEFAULTS.signingWorkers})`,
  },
  'trust-domain': {
    type: 'string',
    value: 'NAME',
    default: DEFAULT_TRUST_DOMAIN,
    description: [
      'trust domain of the SPIFFE ID in pod certificates',
      `(default ${DEFAULT_TRUST_DOMAIN})`,
    ],
  },
  'pod-certificate-max-duration': {
    type: 'string',
    value: 'DURATION',
    default: CONTROLLER_DEFAULTS.podCertificateMaxDuration,
    description: [
      'longest pod certificate, at least 1h; a request may ask',
      `for less (default ${CONTROLLER_DEFAULTS.podCertificateMaxDuration})`,
    ],
  },
  ...OBSERVABILITY_FLAGS,
  'log-level': {
    type: 'string',
    value: 'LEVEL',
    default: CONTROLLER_DEFAULTS.logLevel,
    description: `${LOG_LEVELS.join(', ')} (default ${CONTROLLER_DEFAULTS.logLevel})`,
  },
  ...HELP_FLAG,
} as const satisfies FlagTable;

/** The flags of `cert-csi controller`, as node:util parseArgs options (the manifests test reads them). */
export const CONTROLLER_OPTIONS = flagOptions(CONTROLLER_FLAGS);

export const CONTROLLER_HELP = `Usage: cert-csi controller [flags]

Runs the controller stack against a Kubernetes cluster: the issuer controllers
(approver, CA and SelfSigned CertificateRequest signers, Issuer and ClusterIssuer
readiness), cert-manager's Certificate controllers (trigger, key-manager,
request-manager, issuing, readiness, revision-manager), and the signer of
Kubernetes PodCertificateRequests with its ClusterTrustBundles (when the cluster
serves them). Only the holder of the leader-election Lease works; the others
wait to take over.

${flagList(CONTROLLER_FLAGS)}`;
