import { quoted } from '../../api/echoed-value.js';
import {
  DNS1035_LABEL_MESSAGE,
  DNS1123_LABEL_MESSAGE,
  DNS1123_SUBDOMAIN_MESSAGE,
  isDns1035Label,
  isDns1123Label,
  isDns1123Subdomain,
} from '../../api/kube-names.js';
import { isLogLevel, LOG_LEVELS, type LogLevel } from '../../observability/logger.js';
import {
  type FlagTable,
  type FlagValues,
  flagList,
  flagOptions,
  HELP_FLAG,
} from '../common/flag-table.js';
import { flagDuration } from '../common/flag-values.js';
import { kubeClientFlags, kubeClientFlagTable } from '../common/kube-flags.js';

export const WEBHOOK_DEFAULTS = {
  /** cert-manager's webhook port: above 1024, so the container needs no privilege. */
  securePort: '10250',
  serviceName: 'cert-csi-webhook',
  caSecretName: 'cert-csi-webhook-ca',
  configuration: 'cert-csi-webhook',
  /**
   * Below the configurations' timeoutSeconds (10): an API request of the webhook (a
   * SubjectAccessReview) that takes longer is answered nowhere, as the API server has given up.
   */
  kubeApiTimeout: '5s',
  /**
   * After SIGTERM the pod leaves the Service's endpoints while the API server may still be
   * sending it reviews; serving on for a few seconds keeps those from failing (failurePolicy
   * Fail would refuse the writes).
   */
  shutdownDelay: '5s',
  logLevel: 'info',
} as const;

/** The flags of `cert-csi webhook`, in the order its help lists them. */
export const WEBHOOK_FLAGS = {
  ...kubeClientFlagTable(WEBHOOK_DEFAULTS.kubeApiTimeout),
  'secure-port': {
    type: 'string',
    value: 'PORT',
    default: WEBHOOK_DEFAULTS.securePort,
    description: [
      'HTTPS port of /validate, /mutate, /livez and /readyz',
      `(default ${WEBHOOK_DEFAULTS.securePort}; 0 picks a free one)`,
    ],
  },
  namespace: {
    type: 'string',
    value: 'NS',
    description: [
      "the webhook's namespace: its Service and CA Secret live",
      'there (default: $POD_NAMESPACE)',
    ],
  },
  'service-name': {
    type: 'string',
    value: 'NAME',
    default: WEBHOOK_DEFAULTS.serviceName,
    description: [
      'the Service in front of the webhook; the serving',
      `certificate holds its DNS names (default ${WEBHOOK_DEFAULTS.serviceName})`,
    ],
  },
  'ca-secret-name': {
    type: 'string',
    value: 'NAME',
    default: WEBHOOK_DEFAULTS.caSecretName,
    description: `the Secret holding the webhook's CA (default ${WEBHOOK_DEFAULTS.caSecretName})`,
  },
  'validating-webhook-configuration': {
    type: 'string',
    value: 'NAME',
    default: WEBHOOK_DEFAULTS.configuration,
    description: [
      'whose caBundle is kept current; "" for none',
      `(default ${WEBHOOK_DEFAULTS.configuration})`,
    ],
  },
  'mutating-webhook-configuration': {
    type: 'string',
    value: 'NAME',
    default: WEBHOOK_DEFAULTS.configuration,
    description: [
      'the same for the MutatingWebhookConfiguration',
      `(default ${WEBHOOK_DEFAULTS.configuration})`,
    ],
  },
  'shutdown-delay': {
    type: 'string',
    value: 'DURATION',
    default: WEBHOOK_DEFAULTS.shutdownDelay,
    description: [
      'after SIGTERM, answer reviews this long (readyz failing)',
      `before the listener closes (default ${WEBHOOK_DEFAULTS.shutdownDelay})`,
    ],
  },
  'log-level': {
    type: 'string',
    value: 'LEVEL',
    default: WEBHOOK_DEFAULTS.logLevel,
    description: `${LOG_LEVELS.join(', ')} (default ${WEBHOOK_DEFAULTS.logLevel})`,
  },
  ...HELP_FLAG,
} as const satisfies FlagTable;

/** The flags of `cert-csi webhook`, as node:util parseArgs options (the manifests test reads them). */
export const WEBHOOK_OPTIONS = flagOptions(WEBHOOK_FLAGS);

export const WEBHOOK_HELP = `Usage: cert-csi webhook [flags]

Serves cert-manager's admission webhook for clusters that run cert-csi's controller
without cert-manager: a validating webhook (CertificateRequest identity, spec
immutability and Approved/Denied rules with the approve permission checked by
SubjectAccessReview; Certificate, Issuer and ClusterIssuer validation) and a
mutating one (the requester's identity on new CertificateRequests), over HTTPS with
a serving certificate from its own CA (a Secret in its namespace), renewed before it
expires. It keeps the caBundle of its webhook configurations current. Stateless: run
two replicas.

${flagList(WEBHOOK_FLAGS)}`;

/** What the flags of `cert-csi webhook` ask for, checked. */
export interface WebhookSettings {
  qps: number;
  burst: number;
  requestTimeoutMs: number;
  port: number;
  namespace: string;
  serviceName: string;
  caSecretName: string;
  validatingWebhookConfiguration: string | undefined;
  mutatingWebhookConfiguration: string | undefined;
  shutdownDelayMs: number;
  logLevel: LogLevel;
}

/** What parseArgs makes of the flags. */
type WebhookValues = FlagValues<typeof WEBHOOK_FLAGS>;

function portOf(text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65_535) {
    throw new Error(`--secure-port: must be a port number from 0 to 65535, got ${quoted(text)}`);
  }
  return port;
}

function serviceName(text: string): string {
  // A Service name: a DNS-1035 label.
  if (!isDns1035Label(text)) {
    throw new Error(`--service-name: ${quoted(text)} is not valid: ${DNS1035_LABEL_MESSAGE}`);
  }
  return text;
}

function dnsName(flag: string, text: string, label: boolean): string {
  const valid = label ? isDns1123Label(text) : isDns1123Subdomain(text);
  if (!valid) {
    throw new Error(
      `${flag}: ${quoted(text)} is not valid: ${label ? DNS1123_LABEL_MESSAGE : DNS1123_SUBDOMAIN_MESSAGE}`,
    );
  }
  return text;
}

/** A configuration name, or undefined for "" (none to keep). */
function configurationName(flag: string, text: string): string | undefined {
  return text === '' ? undefined : dnsName(flag, text, false);
}

/**
 * Checks the flags of `cert-csi webhook` (env supplies POD_NAMESPACE); throws an error naming
 * the flag and its value (shortened) when one is wrong.
 */
export function webhookSettings(
  values: WebhookValues,
  env: Record<string, string | undefined> = process.env,
): WebhookSettings {
  const logLevel = values['log-level'];
  if (!isLogLevel(logLevel)) throw new Error(`--log-level: unknown level ${quoted(logLevel)}`);
  const namespace = values.namespace ?? env.POD_NAMESPACE ?? '';
  if (namespace === '') {
    throw new Error(
      '--namespace: not given and POD_NAMESPACE is not set: the webhook must know the namespace of its Service and CA Secret',
    );
  }
  return {
    ...kubeClientFlags(values),
    port: portOf(values['secure-port']),
    namespace: dnsName('--namespace', namespace, true),
    serviceName: serviceName(values['service-name']),
    caSecretName: dnsName('--ca-secret-name', values['ca-secret-name'], false),
    validatingWebhookConfiguration: configurationName(
      '--validating-webhook-configuration',
      values['validating-webhook-configuration'],
    ),
    mutatingWebhookConfiguration: configurationName(
      '--mutating-webhook-configuration',
      values['mutating-webhook-configuration'],
    ),
    shutdownDelayMs: flagDuration('--shutdown-delay', values['shutdown-delay'], true),
    logLevel,
  };
}
