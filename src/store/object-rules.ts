import { quoted as echoed } from '../api/echoed-value.js';
import {
  DNS1123_LABEL_MESSAGE,
  DNS1123_SUBDOMAIN,
  DNS1123_SUBDOMAIN_MESSAGE,
  isDns1123Label,
  isDns1123Subdomain,
} from '../api/kube-names.js';
import type { ResourceKind } from '../api/meta.js';
import { cappedText } from '../base/capped-text.js';
import { StoreError } from './errors.js';

/** The API server's name for a resource: `plural.group`, or `plural` in the core group. */
export function resourceNameOf(kind: Pick<ResourceKind, 'group' | 'plural'>): string {
  return kind.group === '' ? kind.plural : `${kind.plural}.${kind.group}`;
}

/** Rejects a kind whose group or plural could not be a resource (and so not a directory name). */
export function checkKind(kind: ResourceKind): void {
  if ((kind.group !== '' && !isDns1123Subdomain(kind.group)) || !isDns1123Label(kind.plural)) {
    throw new StoreError(
      'Invalid',
      `invalid resource kind ${kind.kind}: group "${kind.group}" must be empty or a DNS subdomain and plural "${kind.plural}" a DNS label`,
    );
  }
}

/**
 * The namespace to use for kind: required and valid for namespaced kinds (unless optional,
 * as when listing every namespace), absent for cluster-scoped ones.
 */
export function checkNamespace(
  kind: ResourceKind,
  namespace: string | undefined,
  required: boolean,
): string | undefined {
  const resource = resourceNameOf(kind);
  if (!kind.namespaced) {
    if (namespace) {
      throw new StoreError(
        'Invalid',
        `${resource} is cluster-scoped: namespace ${echoed(namespace)} must be empty`,
      );
    }
    return undefined;
  }
  if (!namespace) {
    if (!required) return undefined;
    throw new StoreError('Invalid', `${resource} is namespaced: metadata.namespace is required`);
  }
  if (!isDns1123Label(namespace)) {
    throw new StoreError(
      'Invalid',
      `${resource}: namespace ${echoed(namespace)} is invalid: ${DNS1123_LABEL_MESSAGE}`,
    );
  }
  return namespace;
}

/**
 * Rejects a name the API server would: a DNS-1123 subdomain for most kinds; for
 * ClusterTrustBundles, whose signer-linked names join the signer's parts and a subdomain with
 * `:` (`example.com:spiffe:primary`), subdomains joined by `:` (the full rules are the
 * admission layer's). Either way no name holds `/`, `_` or a leading `.`, which state
 * directories rely on.
 */
export function checkName(kind: ResourceKind, name: string, field = 'metadata.name'): void {
  if (kind.group === 'certificates.k8s.io' && kind.plural === 'clustertrustbundles') {
    if (!name.split(':').every(isDns1123Subdomain)) {
      throw new StoreError(
        'Invalid',
        `${kind.kind} ${echoed(name)} is invalid: ${field}: Invalid value: ${echoed(name)}: every ':'-separated part must be ${DNS1123_SUBDOMAIN}`,
      );
    }
    return;
  }
  if (!isDns1123Subdomain(name)) {
    throw new StoreError(
      'Invalid',
      `${kind.kind} ${echoed(name)} is invalid: ${field}: Invalid value: ${echoed(name)}: ${DNS1123_SUBDOMAIN_MESSAGE}`,
    );
  }
}

/** `Certificate.cert-manager.io`, or `Secret` in the core group: a GroupKind as Go prints it. */
export function groupKindOf(kind: Pick<ResourceKind, 'group' | 'kind'>): string {
  return kind.group === '' ? kind.kind : `${kind.kind}.${kind.group}`;
}

/**
 * The API server's Invalid for field errors (apierrors.NewInvalid):
 * `Certificate.cert-manager.io "x" is invalid: <errors>`, where one error stands alone and
 * several are `[a, b]` without repeats, as Go's aggregate error prints them. The name is
 * shortened as every echoed value is, and the message cut at MESSAGE_LIMIT_BYTES.
 */
export function invalidObject(
  kind: Pick<ResourceKind, 'group' | 'kind'>,
  name: string,
  errors: readonly string[],
): StoreError {
  const distinct = [...new Set(errors)];
  const listed = distinct.length === 1 ? (distinct[0] as string) : `[${distinct.join(', ')}]`;
  return new StoreError(
    'Invalid',
    cappedText(`${groupKindOf(kind)} ${echoed(name)} is invalid: ${listed}`),
  );
}

/** `certificaterequests.cert-manager.io "x"`, the way the API server names an object in errors. */
function quoted(kind: ResourceKind, name: string): string {
  return `${resourceNameOf(kind)} "${name}"`;
}

function inNamespace(namespace: string | undefined): string {
  return namespace ? ` (namespace "${namespace}")` : '';
}

/** The API server's NotFound, plus the namespace. */
export function notFound(
  kind: ResourceKind,
  namespace: string | undefined,
  name: string,
): StoreError {
  return new StoreError('NotFound', `${quoted(kind, name)} not found${inNamespace(namespace)}`);
}

/** The API server's AlreadyExists, plus the namespace. */
export function alreadyExists(
  kind: ResourceKind,
  namespace: string | undefined,
  name: string,
): StoreError {
  return new StoreError(
    'AlreadyExists',
    `${quoted(kind, name)} already exists${inNamespace(namespace)}`,
  );
}

/** The API server's Conflict for a stale resourceVersion, plus the versions involved. */
export function conflict(
  kind: ResourceKind,
  namespace: string | undefined,
  name: string,
  given: string,
  current: string | undefined,
): StoreError {
  const where = namespace ? `namespace "${namespace}", ` : '';
  return new StoreError(
    'Conflict',
    `Operation cannot be fulfilled on ${quoted(kind, name)}: the object has been modified; please apply your changes to the latest version and try again (${where}resourceVersion "${given}", current "${current ?? ''}")`,
  );
}

/**
 * Applies what the API server does to every written object of some built-in kinds: a core
 * Secret's write-only stringData is folded into data (base64, winning over data) and
 * dropped. obj is a private copy; it is changed in place.
 */
export function normalizeWrite(kind: ResourceKind, obj: Record<string, unknown>): void {
  if (kind.group !== '' || kind.plural !== 'secrets' || obj.stringData === undefined) return;
  const data: Record<string, unknown> = { ...(obj.data as Record<string, unknown> | undefined) };
  for (const [key, text] of Object.entries(obj.stringData as Record<string, unknown>)) {
    data[key] = Buffer.from(String(text), 'utf8').toString('base64');
  }
  obj.data = data;
  delete obj.stringData;
}
