import { randomUUID } from 'node:crypto';
import type { AdmissionOperation } from '../../src/api/admission-review.js';
import type { KubeObject, ResourceKind } from '../../src/api/meta.js';
import { NamespaceKind } from '../../src/api/namespace.js';
import {
  type MutatingWebhook,
  MutatingWebhookConfigurationKind,
  ValidatingWebhookConfigurationKind,
} from '../../src/api/webhook-configuration.js';
import { goQuote } from '../../src/base/go-text.js';
import { StoreError } from '../../src/store/errors.js';
import type { MemoryStore } from '../../src/store/memory-store.js';
import {
  type AdmissionAttributes,
  admissionReview,
  deniedStatus,
  InvalidResponseError,
  type VerifiedResponse,
  verifyAdmissionResponse,
} from './admission-review.js';
import { applyJsonPatch } from './patch.js';
import { ApiStatusError, internalError, notFound } from './status.js';
import {
  postToWebhook,
  replyReview,
  type ServiceEndpoint,
  WebhookCallError,
  webhookTarget,
} from './webhook-client.js';
import { DEFAULT_TIMEOUT_SECONDS, withWebhookDefaults } from './webhook-configurations.js';
import {
  isEmptySelector,
  type MatchedRequest,
  namespaceLabelSource,
  objectSelectorMatches,
  ruleMatches,
  SelectorError,
  selectorMatches,
} from './webhook-match.js';

export type { ServiceEndpoint } from './webhook-client.js';

/** One webhook call as the fake API server made it, for tests to assert on. */
export interface WebhookCall {
  /** Date.now() when the call started. */
  time: number;
  type: 'mutating' | 'validating';
  /** The webhook configuration's name. */
  configuration: string;
  /** The webhook's name. */
  webhook: string;
  /** The URL as kube-apiserver names it, `?timeout=<n>s` included; '' when none could be built. */
  url: string;
  /** The AdmissionReview's request uid. */
  uid: string;
  operation: AdmissionOperation;
  group: string;
  version: string;
  /** The plural resource. */
  resource: string;
  /** '' for the object itself. */
  subResource: string;
  namespace: string;
  name: string;
  /** The webhook's answer; undefined when the call yielded none. */
  allowed: boolean | undefined;
  /** How long the call took, in milliseconds. */
  latencyMs: number;
  /**
   * allowed or patched (a mutating webhook's patch was applied); denied; failed (the write was
   * refused: a failed call under failurePolicy Fail, or a patch that could not apply); ignored
   * (a failed call under failurePolicy Ignore: the webhook was skipped).
   */
  outcome: 'allowed' | 'patched' | 'denied' | 'failed' | 'ignored';
  /** Why the call failed or was denied: the message of the Status it caused. */
  error: string | undefined;
}

/** A webhook and the configuration it belongs to. */
interface Hook {
  configuration: string;
  webhook: MutatingWebhook;
}

// kube-apiserver never sends the writes of its own admission configuration to webhooks
// (rules.IsExemptAdmissionConfigurationResource), so no webhook can lock itself in.
const EXEMPT_KINDS = new Set([
  'ValidatingWebhookConfiguration',
  'MutatingWebhookConfiguration',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
  'MutatingAdmissionPolicy',
  'MutatingAdmissionPolicyBinding',
]);

function isExempt(kind: ResourceKind): boolean {
  return kind.group === 'admissionregistration.k8s.io' && EXEMPT_KINDS.has(kind.kind);
}

/**
 * The `Warning` header values of the webhooks' warnings, as the API server's recorder writes
 * them: `299 - "<text>"`, each text once; control characters become spaces and the UTF-8
 * bytes of the rest are carried as they are.
 */
export function warningHeaders(warnings: readonly string[]): string[] {
  return [...new Set(warnings)].map((text) => {
    let clean = '';
    for (const ch of text) {
      const code = ch.charCodeAt(0);
      if (code < 0x20 || code === 0x7f) clean += ' ';
      else if (ch === '"' || ch === '\\') clean += `\\${ch}`;
      else clean += ch;
    }
    return `299 - "${Buffer.from(clean, 'utf8').toString('latin1')}"`;
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function matchedRequest(attributes: AdmissionAttributes): MatchedRequest {
  return {
    operation: attributes.operation,
    group: attributes.kind.group,
    version: attributes.kind.version,
    resource: attributes.kind.plural,
    subResource: attributes.subResource,
    namespace: attributes.namespace,
  };
}

/**
 * Calls the admission webhooks that the stored Validating- and MutatingWebhookConfigurations
 * select for a write, as kube-apiserver's admission plugins do: mutating ones one after the
 * other (configurations by name, webhooks in order), each seeing the previous one's patch;
 * validating ones all at once. Every call is logged in `calls`.
 */
export class WebhookDispatcher {
  /** Every call, in the order they ended. */
  readonly calls: WebhookCall[] = [];
  private readonly services = new Map<string, ServiceEndpoint>();

  constructor(private readonly store: MemoryStore) {}

  /** Routes a Service port to an endpoint (undefined removes the route: the Service is gone). */
  setServiceEndpoint(
    namespace: string,
    name: string,
    port: number,
    endpoint: ServiceEndpoint | undefined,
  ): void {
    const key = `${namespace}/${name}:${port}`;
    if (endpoint) this.services.set(key, { ...endpoint });
    else this.services.delete(key);
  }

  /**
   * Runs the mutating webhooks on a write and returns the object they leave (attributes.object
   * when none patched it). Throws the ApiStatusError that refuses the write; warnings the
   * webhooks return are pushed onto warnings.
   */
  async mutate(
    attributes: AdmissionAttributes,
    warnings: string[],
  ): Promise<KubeObject | undefined> {
    if (isExempt(attributes.kind)) return attributes.object;
    let current = attributes;
    const namespaceLabels = this.namespaceLabelCache();
    for (const hook of await this.hooks(MutatingWebhookConfigurationKind)) {
      if (!(await this.selects(hook, current, namespaceLabels))) continue;
      const object = await this.call(hook, 'mutating', current, warnings);
      current = { ...current, object };
    }
    return current.object;
  }

  /**
   * Runs the validating webhooks on a write, all at once; throws the first refusal that
   * arrives (as upstream, the others are only logged).
   */
  async validate(attributes: AdmissionAttributes, warnings: string[]): Promise<void> {
    if (isExempt(attributes.kind)) return;
    const namespaceLabels = this.namespaceLabelCache();
    const selected: Hook[] = [];
    for (const hook of await this.hooks(ValidatingWebhookConfigurationKind)) {
      if (await this.selects(hook, attributes, namespaceLabels)) selected.push(hook);
    }
    const refusals: unknown[] = [];
    await Promise.all(
      selected.map((hook) =>
        this.call(hook, 'validating', attributes, warnings).catch((err: unknown) => {
          refusals.push(err);
        }),
      ),
    );
    if (refusals.length > 0) throw refusals[0];
  }

  /** The webhooks of every configuration of kind, configurations sorted by name, defaulted. */
  private async hooks(kind: ResourceKind): Promise<Hook[]> {
    const { items } = await this.store.list(kind);
    const byName = [...items].sort((a, b) =>
      a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0,
    );
    return byName.flatMap((configuration) => {
      // Objects seeded into the store skipped the server's defaulting; apply it here too.
      const mutating = kind === MutatingWebhookConfigurationKind;
      const defaulted = withWebhookDefaults(configuration, mutating) as KubeObject & {
        webhooks?: MutatingWebhook[];
      };
      return (defaulted.webhooks ?? []).map((webhook) => ({
        configuration: configuration.metadata.name,
        webhook,
      }));
    });
  }

  /** Looks each Namespace's labels up once per admission pass; a missing one is a 404. */
  private namespaceLabelCache(): (name: string) => Promise<Record<string, string> | undefined> {
    const cache = new Map<string, Promise<Record<string, string> | undefined>>();
    return (name) => {
      let labels = cache.get(name);
      if (!labels) {
        labels = this.store.get(NamespaceKind, name).then(
          (namespace) => namespace.metadata.labels,
          (err: unknown) => {
            if (err instanceof StoreError && err.reason === 'NotFound') {
              throw notFound(NamespaceKind, name);
            }
            throw err;
          },
        );
        cache.set(name, labels);
      }
      return labels;
    };
  }

  /**
   * ShouldCallHook: the rules, the objectSelector and the namespaceSelector must all select
   * the request; a selector that fails to evaluate refuses the write only when everything
   * else selects it, as upstream orders it.
   */
  private async selects(
    hook: Hook,
    attributes: AdmissionAttributes,
    namespaceLabels: (name: string) => Promise<Record<string, string> | undefined>,
  ): Promise<boolean> {
    const { webhook } = hook;
    const request = matchedRequest(attributes);
    if (!(webhook.rules ?? []).some((rule) => ruleMatches(rule, request))) return false;
    let objectError: unknown;
    let objectMatches = false;
    try {
      objectMatches = objectSelectorMatches(
        webhook.objectSelector,
        attributes.object,
        attributes.oldObject,
      );
    } catch (err) {
      objectError = err;
    }
    if (objectError === undefined && !objectMatches) return false;
    let namespaceError: unknown;
    let namespaceMatches = true;
    if (!isEmptySelector(webhook.namespaceSelector)) {
      const source = namespaceLabelSource(request, attributes.object);
      try {
        if (source.kind === 'object') {
          namespaceMatches = selectorMatches(
            webhook.namespaceSelector,
            source.object?.metadata.labels,
          );
        } else if (source.kind === 'namespace') {
          namespaceMatches = selectorMatches(
            webhook.namespaceSelector,
            await namespaceLabels(source.name),
          );
        }
      } catch (err) {
        namespaceError = err;
      }
    }
    if (namespaceError === undefined && !namespaceMatches) return false;
    for (const err of [namespaceError, objectError]) {
      if (err instanceof SelectorError) throw internalError(err.message);
      if (err !== undefined) throw err;
    }
    if ((webhook.matchConditions ?? []).length > 0) {
      // Refused when written; only a configuration seeded straight into the store has them.
      throw internalError(
        `webhook ${goQuote(webhook.name)} has matchConditions, which the fake API server does not evaluate`,
      );
    }
    return true;
  }

  /**
   * One call: the AdmissionReview out, the answer checked, the patch applied (mutating).
   * Returns the object after the webhook; throws the ApiStatusError that refuses the write.
   */
  private async call(
    hook: Hook,
    type: 'mutating' | 'validating',
    attributes: AdmissionAttributes,
    warnings: string[],
  ): Promise<KubeObject | undefined> {
    const { webhook } = hook;
    const uid = randomUUID();
    const time = Date.now();
    const started = performance.now();
    let url = '';
    let allowed: boolean | undefined;
    const log = (outcome: WebhookCall['outcome'], error?: string) => {
      this.calls.push({
        time,
        type,
        configuration: hook.configuration,
        webhook: webhook.name,
        url,
        uid,
        operation: attributes.operation,
        group: attributes.kind.group,
        version: attributes.kind.version,
        resource: attributes.kind.plural,
        subResource: attributes.subResource,
        namespace: attributes.namespace,
        name: attributes.name,
        allowed,
        latencyMs: performance.now() - started,
        outcome,
        error,
      });
    };
    // A call that yields no usable answer: the write fails (Fail) or the webhook is skipped.
    const callFailed = (reason: string): KubeObject | undefined => {
      const message = `failed calling webhook ${goQuote(webhook.name)}: ${reason}`;
      if (webhook.failurePolicy === 'Ignore') {
        log('ignored', message);
        return attributes.object;
      }
      const refusal = internalError(message);
      log('failed', refusal.message);
      throw refusal;
    };
    const refused = (refusal: ApiStatusError): never => {
      log('failed', refusal.message);
      throw refusal;
    };

    let response: VerifiedResponse;
    try {
      response = await this.exchange(webhook, type, uid, attributes, (target) => {
        url = target;
      });
    } catch (err) {
      if (err instanceof WebhookCallError) return callFailed(err.reason);
      throw err;
    }
    allowed = response.allowed;
    warnings.push(...response.warnings);
    if (!response.allowed) {
      const denial = new ApiStatusError(deniedStatus(webhook.name, response.result));
      log('denied', denial.message);
      throw denial;
    }
    if (response.patch === '') {
      log('allowed');
      return attributes.object;
    }
    let operations: unknown;
    try {
      operations = JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8'));
    } catch (err) {
      return callFailed(
        `received undecodable patch in webhook response: ${(err as Error).message}`,
      );
    }
    if (!Array.isArray(operations)) {
      return callFailed(
        'received undecodable patch in webhook response: json: cannot unmarshal object into Go value of type jsonpatch.Patch',
      );
    }
    if (operations.length === 0) {
      log('allowed');
      return attributes.object;
    }
    if (attributes.object === undefined) {
      return refused(
        internalError(
          `admission webhook ${goQuote(webhook.name)} attempted to modify the object, which is not supported for this operation`,
        ),
      );
    }
    if (response.patchType !== 'JSONPatch') {
      return callFailed(`unsupported patch type ${goQuote(response.patchType)}`);
    }
    let patched: unknown;
    try {
      patched = applyJsonPatch(attributes.object, operations);
    } catch (err) {
      return refused(internalError((err as Error).message));
    }
    if (!isRecord(patched) || !isRecord(patched.metadata)) {
      return refused(
        internalError(
          `admission webhook ${goQuote(webhook.name)} patched the object into something that is not an object`,
        ),
      );
    }
    log('patched');
    return patched as unknown as KubeObject;
  }

  /** Sends the review and returns the checked answer; throws WebhookCallError when there is none. */
  private async exchange(
    webhook: MutatingWebhook,
    type: 'mutating' | 'validating',
    uid: string,
    attributes: AdmissionAttributes,
    onUrl: (url: string) => void,
  ): Promise<VerifiedResponse> {
    const versions = webhook.admissionReviewVersions ?? [];
    if (!versions.includes('v1')) {
      throw new WebhookCallError(
        versions.includes('v1beta1')
          ? 'could not create admission objects: the fake API server sends only admission.k8s.io/v1 AdmissionReviews'
          : 'could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)',
      );
    }
    const timeoutSeconds = webhook.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS;
    const target = webhookTarget(webhook.clientConfig, timeoutSeconds, (namespace, name, port) => {
      const endpoint = this.services.get(`${namespace}/${name}:${port}`);
      if (endpoint) return endpoint;
      const known = [...this.services.keys()].some((key) =>
        key.startsWith(`${namespace}/${name}:`),
      );
      return {
        error: known
          ? `no service port ${port} found for service ${goQuote(name)}`
          : `service ${goQuote(name)} not found`,
      };
    });
    onUrl(target.url);
    const reply = await postToWebhook(
      target,
      JSON.stringify(admissionReview(uid, attributes)),
      timeoutSeconds * 1000,
    );
    const review = replyReview(reply);
    try {
      return verifyAdmissionResponse(uid, type === 'mutating', review);
    } catch (err) {
      if (err instanceof InvalidResponseError) {
        throw new WebhookCallError(`received invalid webhook response: ${err.message}`);
      }
      throw err;
    }
  }
}
