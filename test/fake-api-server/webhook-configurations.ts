import {
  dns1035LabelErrors,
  dns1123SubdomainErrors,
  qualifiedNameErrors,
} from '../../src/api/kube-names.js';
import type { KubeObject, ResourceKind } from '../../src/api/meta.js';
import {
  type LabelSelector,
  type MutatingWebhook,
  MutatingWebhookConfigurationKind,
  type RuleWithOperations,
  ValidatingWebhookConfigurationKind,
  type WebhookClientConfig,
} from '../../src/api/webhook-configuration.js';
import {
  duplicateField,
  forbiddenField,
  invalidField,
  requiredField,
  unsupportedField,
} from '../../src/base/field-error.js';
import { goQuote } from '../../src/base/go-text.js';
import { builtinKind, type KindStrategy, type ServedKind } from './kinds.js';
import { invalidFields } from './status.js';

// kube-apiserver's defaulting (pkg/apis/admissionregistration/v1/defaults.go) and validation
// (pkg/apis/admissionregistration/validation) of webhook configurations, with its messages,
// as far as the fake API server needs them to call the webhooks faithfully.

/** The timeout of a webhook call when the configuration gives none (admissionregistration/v1). */
export const DEFAULT_TIMEOUT_SECONDS = 10;
/** The port of a service reference that names none. */
export const DEFAULT_SERVICE_PORT = 443;

const FAILURE_POLICIES = ['Fail', 'Ignore'];
const MATCH_POLICIES = ['Equivalent', 'Exact'];
const SIDE_EFFECTS = ['None', 'NoneOnDryRun'];
const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const SCOPES = ['*', 'Cluster', 'Namespaced'];
const REINVOCATION_POLICIES = ['IfNeeded', 'Never'];
const REVIEW_VERSIONS = ['v1', 'v1beta1'];
const SELECTOR_OPERATORS = new Set(['In', 'NotIn', 'Exists', 'DoesNotExist']);
const URL_FORM = '; desired format: https://host[/path]';

type Webhook = MutatingWebhook;
type Configuration = KubeObject & { webhooks?: Webhook[] };

/** Go's `%#v` of a []string, as a field error prints a list it refuses. */
function goStringSlice(type: string, values: readonly string[]): { text: string } {
  return { text: `[]${type}{${values.map(goQuote).join(', ')}}` };
}

/** The v1 defaults kube-apiserver fills in when it decodes a configuration. */
export function withWebhookDefaults<T extends KubeObject>(configuration: T, mutating: boolean): T {
  const webhooks = (configuration as Configuration).webhooks;
  if (!Array.isArray(webhooks)) return configuration;
  return {
    ...configuration,
    webhooks: webhooks.map((hook) => {
      const service = hook.clientConfig?.service;
      return {
        ...hook,
        ...(hook.clientConfig && {
          clientConfig: {
            ...hook.clientConfig,
            ...(service && { service: { ...service, port: service.port ?? DEFAULT_SERVICE_PORT } }),
          },
        }),
        ...(hook.rules && {
          rules: hook.rules.map((rule) => ({ ...rule, scope: rule.scope ?? '*' })),
        }),
        failurePolicy: hook.failurePolicy ?? 'Fail',
        matchPolicy: hook.matchPolicy ?? 'Equivalent',
        namespaceSelector: hook.namespaceSelector ?? {},
        objectSelector: hook.objectSelector ?? {},
        timeoutSeconds: hook.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS,
        ...(mutating && { reinvocationPolicy: hook.reinvocationPolicy ?? 'Never' }),
      };
    }),
  };
}

/** The field errors of a configuration, in kube-apiserver's order; [] when it is valid. */
export function webhookConfigurationErrors(configuration: KubeObject, mutating: boolean): string[] {
  const errors: string[] = [];
  const names = new Set<string>();
  const webhooks = (configuration as Configuration).webhooks ?? [];
  webhooks.forEach((hook, i) => {
    const path = `webhooks[${i}]`;
    errors.push(...webhookErrors(hook, path, mutating));
    errors.push(
      ...reviewVersionErrors(hook.admissionReviewVersions, `${path}.admissionReviewVersions`),
    );
    if (hook.name) {
      if (names.has(hook.name)) errors.push(duplicateField(`${path}.name`, hook.name));
      names.add(hook.name);
    }
  });
  return errors;
}

function webhookErrors(hook: Webhook, path: string, mutating: boolean): string[] {
  const errors = fullyQualifiedNameErrors(`${path}.name`, hook.name ?? '');
  (hook.rules ?? []).forEach((rule, j) => {
    errors.push(...ruleErrors(rule, `${path}.rules[${j}]`));
  });
  if (hook.failurePolicy !== undefined && !FAILURE_POLICIES.includes(hook.failurePolicy)) {
    errors.push(unsupportedField(`${path}.failurePolicy`, hook.failurePolicy, FAILURE_POLICIES));
  }
  if (hook.matchPolicy !== undefined && !MATCH_POLICIES.includes(hook.matchPolicy)) {
    errors.push(unsupportedField(`${path}.matchPolicy`, hook.matchPolicy, MATCH_POLICIES));
  }
  if (hook.sideEffects === undefined) {
    errors.push(
      requiredField(`${path}.sideEffects`, `must specify one of ${SIDE_EFFECTS.join(', ')}`),
    );
  } else if (!SIDE_EFFECTS.includes(hook.sideEffects)) {
    errors.push(unsupportedField(`${path}.sideEffects`, hook.sideEffects, SIDE_EFFECTS));
  }
  const timeout = hook.timeoutSeconds;
  if (timeout !== undefined && (timeout > 30 || timeout < 1)) {
    errors.push(
      invalidField(
        `${path}.timeoutSeconds`,
        timeout,
        'the timeout value must be between 1 and 30 seconds',
      ),
    );
  }
  errors.push(...selectorErrors(hook.namespaceSelector, `${path}.namespaceSelector`));
  errors.push(...selectorErrors(hook.objectSelector, `${path}.objectSelector`));
  const reinvocation = hook.reinvocationPolicy;
  if (mutating && reinvocation !== undefined && !REINVOCATION_POLICIES.includes(reinvocation)) {
    errors.push(
      unsupportedField(`${path}.reinvocationPolicy`, reinvocation, REINVOCATION_POLICIES),
    );
  }
  errors.push(...clientConfigErrors(hook.clientConfig ?? {}, `${path}.clientConfig`));
  if ((hook.matchConditions ?? []).length > 0) {
    // kube-apiserver compiles these CEL expressions; the fake cannot evaluate them, so it
    // refuses them rather than call a webhook the cluster would have skipped.
    errors.push(forbiddenField(`${path}.matchConditions`, 'not supported by the fake API server'));
  }
  return errors;
}

/** utilvalidation.IsFullyQualifiedName: a DNS subdomain of at least three labels. */
function fullyQualifiedNameErrors(path: string, name: string): string[] {
  if (name === '') return [requiredField(path, '')];
  const subdomain = dns1123SubdomainErrors(name);
  if (subdomain.length > 0) return [invalidField(path, name, subdomain.join(','))];
  if (name.split('.').length < 3) {
    return [
      invalidField(path, name, 'should be a domain with at least three segments separated by dots'),
    ];
  }
  return [];
}

function wildcardWithOthers(values: readonly string[]): boolean {
  return values.length > 1 && values.includes('*');
}

function ruleErrors(rule: RuleWithOperations, path: string): string[] {
  const errors: string[] = [];
  const operations = rule.operations ?? [];
  if (operations.length === 0) errors.push(requiredField(`${path}.operations`, ''));
  if (wildcardWithOthers(operations)) {
    errors.push(
      invalidField(
        `${path}.operations`,
        goStringSlice('admissionregistration.OperationType', operations),
        "if '*' is present, must not specify other operations",
      ),
    );
  }
  operations.forEach((operation, i) => {
    if (!OPERATIONS.includes(operation)) {
      errors.push(unsupportedField(`${path}.operations[${i}]`, operation, OPERATIONS));
    }
  });
  const groups = rule.apiGroups ?? [];
  if (groups.length === 0) errors.push(requiredField(`${path}.apiGroups`, ''));
  if (wildcardWithOthers(groups)) {
    errors.push(
      invalidField(
        `${path}.apiGroups`,
        goStringSlice('string', groups),
        "if '*' is present, must not specify other API groups",
      ),
    );
  }
  const versions = rule.apiVersions ?? [];
  if (versions.length === 0) errors.push(requiredField(`${path}.apiVersions`, ''));
  if (wildcardWithOthers(versions)) {
    errors.push(
      invalidField(
        `${path}.apiVersions`,
        goStringSlice('string', versions),
        "if '*' is present, must not specify other API versions",
      ),
    );
  }
  versions.forEach((version, i) => {
    if (version === '') errors.push(requiredField(`${path}.apiVersions[${i}]`, ''));
  });
  errors.push(...resourceErrors(rule.resources ?? [], `${path}.resources`));
  if (rule.scope !== undefined && !SCOPES.includes(rule.scope)) {
    errors.push(unsupportedField(`${path}.scope`, rule.scope, SCOPES));
  }
  return errors;
}

/** validateResources: `x`, `x/y`, `x/*`, `*\/y`, `*`, `*\/*` and the combinations that overlap. */
function resourceErrors(resources: readonly string[], path: string): string[] {
  const errors: string[] = [];
  if (resources.length === 0) errors.push(requiredField(path, ''));
  const wildcardSubresourceOf = new Set<string>();
  const wildcardResourceOf = new Set<string>();
  let doubleWildcard = false;
  let singleWildcard = false;
  let withoutSubresource = false;
  resources.forEach((resSub, i) => {
    if (resSub === '') {
      errors.push(requiredField(`${path}[${i}]`, ''));
      return;
    }
    if (resSub === '*/*') doubleWildcard = true;
    if (resSub === '*') singleWildcard = true;
    const slash = resSub.indexOf('/');
    if (slash < 0) {
      withoutSubresource = resSub !== '*';
      return;
    }
    const res = resSub.slice(0, slash);
    const sub = resSub.slice(slash + 1);
    if (wildcardSubresourceOf.has(res)) {
      errors.push(
        invalidField(
          `${path}[${i}]`,
          resSub,
          `if '${res}/*' is present, must not specify ${resSub}`,
        ),
      );
    }
    if (wildcardResourceOf.has(sub)) {
      errors.push(
        invalidField(
          `${path}[${i}]`,
          resSub,
          `if '*/${sub}' is present, must not specify ${resSub}`,
        ),
      );
    }
    if (sub === '*') wildcardSubresourceOf.add(res);
    if (res === '*') wildcardResourceOf.add(sub);
  });
  if (resources.length > 1 && doubleWildcard) {
    errors.push(
      invalidField(
        path,
        goStringSlice('string', resources),
        "if '*/*' is present, must not specify other resources",
      ),
    );
  }
  if (singleWildcard && withoutSubresource) {
    errors.push(
      invalidField(
        path,
        goStringSlice('string', resources),
        "if '*' is present, must not specify other resources without subresources",
      ),
    );
  }
  return errors;
}

/** metav1validation.ValidateLabelSelector: operators, their values and the keys. */
function selectorErrors(selector: LabelSelector | undefined, path: string): string[] {
  const errors: string[] = [];
  for (const key of Object.keys(selector?.matchLabels ?? {})) {
    for (const problem of qualifiedNameErrors(key)) {
      errors.push(invalidField(`${path}.matchLabels`, key, problem));
    }
  }
  (selector?.matchExpressions ?? []).forEach((requirement, i) => {
    const at = `${path}.matchExpressions[${i}]`;
    const values = requirement.values ?? [];
    if (requirement.operator === 'In' || requirement.operator === 'NotIn') {
      if (values.length === 0) {
        errors.push(
          requiredField(`${at}.values`, "must be specified when `operator` is 'In' or 'NotIn'"),
        );
      }
    } else if (SELECTOR_OPERATORS.has(requirement.operator)) {
      if (values.length > 0) {
        errors.push(
          forbiddenField(
            `${at}.values`,
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
          ),
        );
      }
    } else {
      errors.push(
        invalidField(
          `${at}.operator`,
          String(requirement.operator),
          'not a valid selector operator',
        ),
      );
    }
    for (const problem of qualifiedNameErrors(requirement.key ?? '')) {
      errors.push(invalidField(`${at}.key`, requirement.key ?? '', problem));
    }
  });
  return errors;
}

function clientConfigErrors(config: WebhookClientConfig, path: string): string[] {
  if ((config.url === undefined) === (config.service === undefined)) {
    return [requiredField(path, 'exactly one of url or service is required')];
  }
  if (config.url !== undefined) return urlErrors(config.url, `${path}.url`);
  const service = config.service as NonNullable<WebhookClientConfig['service']>;
  return serviceErrors(service, `${path}.service`);
}

/** webhook.ValidateWebhookURL with https forced; user information is echoed without its password. */
function urlErrors(text: string, path: string): string[] {
  let url: URL;
  try {
    url = new URL(text);
  } catch (err) {
    return [requiredField(path, `url must be a valid URL: ${(err as Error).message}${URL_FORM}`)];
  }
  const errors: string[] = [];
  const scheme = url.protocol.replace(/:$/, '');
  if (scheme !== 'https') {
    errors.push(invalidField(path, scheme, `'https' is the only allowed URL scheme${URL_FORM}`));
  }
  if (url.host === '')
    errors.push(invalidField(path, url.host, `host must be provided${URL_FORM}`));
  if (url.username !== '' || url.password !== '') {
    errors.push(invalidField(path, url.username, 'user information is not permitted in the URL'));
  }
  if (url.hash !== '') {
    errors.push(invalidField(path, url.hash.slice(1), 'fragments are not permitted in the URL'));
  }
  if (url.search !== '') {
    errors.push(
      invalidField(path, url.search.slice(1), 'query parameters are not permitted in the URL'),
    );
  }
  return errors;
}

/** webhook.ValidateWebhookService: name, namespace, port and a path of DNS subdomain segments. */
function serviceErrors(
  service: NonNullable<WebhookClientConfig['service']>,
  path: string,
): string[] {
  const errors: string[] = [];
  if (!service.name) errors.push(requiredField(`${path}.name`, 'service name is required'));
  if (!service.namespace)
    errors.push(requiredField(`${path}.namespace`, 'service namespace is required'));
  const port = service.port ?? DEFAULT_SERVICE_PORT;
  if (!(Number.isInteger(port) && port >= 1 && port <= 65535)) {
    errors.push(
      invalidField(
        `${path}.port`,
        port,
        'port is not valid: must be between 1 and 65535, inclusive',
      ),
    );
  }
  const urlPath = service.path;
  if (urlPath === undefined || urlPath === '/' || urlPath === '') return errors;
  if (urlPath === '//')
    return [...errors, invalidField(`${path}.path`, urlPath, 'segment[0] may not be empty')];
  if (!urlPath.startsWith('/'))
    errors.push(invalidField(`${path}.path`, urlPath, "must start with a '/'"));
  const steps = urlPath.slice(1).replace(/\/$/, '').split('/');
  steps.forEach((step, i) => {
    if (step === '') {
      errors.push(invalidField(`${path}.path`, urlPath, `segment[${i}] may not be empty`));
      return;
    }
    for (const failure of dns1123SubdomainErrors(step)) {
      errors.push(invalidField(`${path}.path`, urlPath, `segment[${i}]: ${failure}`));
    }
  });
  return errors;
}

/** validateAdmissionReviewVersions on create: required, unique, DNS-1035 labels, one of v1/v1beta1. */
function reviewVersionErrors(versions: readonly string[] | undefined, path: string): string[] {
  if (!versions || versions.length === 0) {
    return [requiredField(path, `must specify one of ${REVIEW_VERSIONS.join(', ')}`)];
  }
  const errors: string[] = [];
  const seen = new Set<string>();
  versions.forEach((version, i) => {
    if (seen.has(version)) {
      errors.push(invalidField(`${path}[${i}]`, version, 'duplicate version'));
      return;
    }
    seen.add(version);
    for (const problem of dns1035LabelErrors(version)) {
      errors.push(invalidField(`${path}[${i}]`, version, problem));
    }
  });
  if (!versions.some((version) => REVIEW_VERSIONS.includes(version))) {
    errors.push(
      invalidField(
        path,
        goStringSlice('string', versions),
        `must include at least one of ${REVIEW_VERSIONS.join(', ')}`,
      ),
    );
  }
  return errors;
}

function configurationStrategy(kind: ResourceKind, mutating: boolean): KindStrategy {
  const admit = (object: KubeObject): KubeObject => {
    const defaulted = withWebhookDefaults(object, mutating);
    const errors = webhookConfigurationErrors(defaulted, mutating);
    if (errors.length > 0) throw invalidFields(kind, object.metadata.name ?? '', errors);
    return defaulted;
  };
  return {
    create: async (object) => admit(object),
    update: (object) => admit(object),
  };
}

/** The two webhook configuration kinds, defaulted and validated as kube-apiserver does. */
export const webhookConfigurationKinds: readonly ServedKind[] = [
  builtinKind(ValidatingWebhookConfigurationKind, {
    strategy: configurationStrategy(ValidatingWebhookConfigurationKind, false),
  }),
  builtinKind(MutatingWebhookConfigurationKind, {
    strategy: configurationStrategy(MutatingWebhookConfigurationKind, true),
  }),
];
