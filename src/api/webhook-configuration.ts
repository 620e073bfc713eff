import type { KubeObject, ResourceKind } from './meta.js';

// admissionregistration.k8s.io/v1 webhook configurations: which writes the API server sends to
// an admission webhook, and how it reaches it. `cert-csi webhook` keeps the caBundle of its own
// configurations current; the fake API server calls the webhooks they describe.

export const ValidatingWebhookConfigurationKind: ResourceKind = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  kind: 'ValidatingWebhookConfiguration',
  plural: 'validatingwebhookconfigurations',
  namespaced: false,
};

export const MutatingWebhookConfigurationKind: ResourceKind = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  kind: 'MutatingWebhookConfiguration',
  plural: 'mutatingwebhookconfigurations',
  namespaced: false,
};

/** A Service in front of the webhook; the API server calls `https://<name>.<namespace>.svc:<port><path>`. */
export interface ServiceReference {
  namespace: string;
  name: string;
  path?: string;
  /** 443 by default. */
  port?: number;
}

/** How the API server reaches a webhook: exactly one of url and service. */
export interface WebhookClientConfig {
  /** `https://host[:port][/path]`, no query or fragment. */
  url?: string;
  service?: ServiceReference;
  /** Base64 of the PEM CA certificates that verify the webhook's serving certificate; the system roots without it. */
  caBundle?: string;
}

export type WebhookOperation = '*' | 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** Which requests a webhook gets: every list is matched exactly or by `*`; resources may be `x/status`, `*\/status`, `*\/*`. */
export interface RuleWithOperations {
  operations?: WebhookOperation[];
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  /** `*` (default), `Cluster` or `Namespaced`. */
  scope?: string;
}

/** One term of a metav1.LabelSelector. */
export interface LabelSelectorRequirement {
  key: string;
  /** In, NotIn, Exists or DoesNotExist. */
  operator: string;
  values?: string[];
}

/** A metav1.LabelSelector: every matchLabels pair and every expression must hold; empty selects everything. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

/** A CEL expression a request must satisfy (not evaluated by the fake API server). */
export interface MatchCondition {
  name: string;
  expression: string;
}

/** What validating and mutating webhooks share. */
export interface WebhookCommon {
  /** A fully qualified name (at least three DNS labels), unique in its configuration. */
  name: string;
  clientConfig: WebhookClientConfig;
  rules?: RuleWithOperations[];
  /** Fail (default) refuses the write when the call fails; Ignore skips the webhook. */
  failurePolicy?: string;
  matchPolicy?: string;
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  /** None or NoneOnDryRun. */
  sideEffects?: string;
  /** 1 to 30, 10 by default. */
  timeoutSeconds?: number;
  admissionReviewVersions?: string[];
  matchConditions?: MatchCondition[];
}

export type ValidatingWebhook = WebhookCommon;

export interface MutatingWebhook extends WebhookCommon {
  /** Never (default) or IfNeeded. */
  reinvocationPolicy?: string;
}

export interface ValidatingWebhookConfiguration extends KubeObject {
  webhooks?: ValidatingWebhook[];
}

export interface MutatingWebhookConfiguration extends KubeObject {
  webhooks?: MutatingWebhook[];
}
