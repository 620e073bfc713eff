import {
  ADMISSION_REVIEW_API_VERSION,
  ADMISSION_REVIEW_KIND,
  type AdmissionOperation,
  type GroupVersionResource,
} from '../../src/api/admission-review.js';
import type { KubeObject, ResourceKind } from '../../src/api/meta.js';
import type { UserInfo } from '../../src/api/user-info.js';
import { goQuote } from '../../src/base/go-text.js';
import type { Status, StatusDetails } from './status.js';

// The AdmissionReview v1 exchange as kube-apiserver holds it (k8s.io/apiserver
// pkg/admission/plugin/webhook/request/admissionreview.go, errors/statuserror.go): the request
// it sends, the checks on the answer, and the Status a denial becomes.

/** What the API server knows about a write when it asks a webhook. */
export interface AdmissionAttributes {
  operation: AdmissionOperation;
  kind: ResourceKind;
  /** '' for the object itself, e.g. 'status'. */
  subResource: string;
  /** '' for a create with generateName (the name is not chosen yet). */
  name: string;
  /** '' for cluster-scoped objects. */
  namespace: string;
  /** The object being written (absent for DELETE). */
  object: KubeObject | undefined;
  /** The stored object an UPDATE or a DELETE replaces. */
  oldObject: KubeObject | undefined;
  /** CreateOptions, UpdateOptions (patches too, as upstream) or DeleteOptions, with kind and apiVersion. */
  options: Record<string, unknown>;
  userInfo: UserInfo;
}

/** A GroupVersionKind or GroupVersionResource as the review carries them. */
interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/**
 * admission.k8s.io/v1 AdmissionRequest, field for field as kube-apiserver marshals it (the
 * webhook's src/api/admission-review.ts reads only part of it).
 */
export interface AdmissionRequest {
  uid: string;
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  subResource?: string;
  requestKind: GroupVersionKind;
  requestResource: GroupVersionResource;
  requestSubResource?: string;
  name?: string;
  namespace?: string;
  operation: AdmissionOperation;
  userInfo: UserInfo;
  object: KubeObject | null;
  oldObject: KubeObject | null;
  dryRun: boolean;
  options: Record<string, unknown>;
}

export interface AdmissionReviewRequest {
  apiVersion: typeof ADMISSION_REVIEW_API_VERSION;
  kind: typeof ADMISSION_REVIEW_KIND;
  request: AdmissionRequest;
}

/** The part of a metav1.Status a webhook may return in `response.status`. */
export interface WebhookResult {
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: StatusDetails;
}

/** A webhook's answer after the checks of VerifyAdmissionResponse. */
export interface VerifiedResponse {
  allowed: boolean;
  /** The base64 `patch`, '' when none. */
  patch: string;
  /** '' when none. */
  patchType: string;
  result: WebhookResult | undefined;
  warnings: string[];
}

/** An answer kube-apiserver refuses (VerifyAdmissionResponse's errors). */
export class InvalidResponseError extends Error {}

/** The AdmissionReview kube-apiserver sends; fields Go omits when empty are left out. */
export function admissionReview(
  uid: string,
  attributes: AdmissionAttributes,
): AdmissionReviewRequest {
  const { kind } = attributes;
  const gvk = { group: kind.group, version: kind.version, kind: kind.kind };
  const gvr = { group: kind.group, version: kind.version, resource: kind.plural };
  const user = attributes.userInfo;
  const userInfo: UserInfo = {
    ...(user.username && { username: user.username }),
    ...(user.uid && { uid: user.uid }),
    ...(user.groups && user.groups.length > 0 && { groups: [...user.groups] }),
    ...(user.extra && Object.keys(user.extra).length > 0 && { extra: structuredClone(user.extra) }),
  } as UserInfo;
  return {
    apiVersion: ADMISSION_REVIEW_API_VERSION,
    kind: ADMISSION_REVIEW_KIND,
    request: {
      uid,
      kind: gvk,
      resource: gvr,
      ...(attributes.subResource && { subResource: attributes.subResource }),
      requestKind: { ...gvk },
      requestResource: { ...gvr },
      ...(attributes.subResource && { requestSubResource: attributes.subResource }),
      ...(attributes.name && { name: attributes.name }),
      ...(attributes.namespace && { namespace: attributes.namespace }),
      operation: attributes.operation,
      userInfo,
      object: attributes.object ? structuredClone(attributes.object) : null,
      oldObject: attributes.oldObject ? structuredClone(attributes.oldObject) : null,
      dryRun: false,
      options: structuredClone(attributes.options),
    },
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** schema.GroupVersionKind's String(): `group/version, Kind=kind`. */
function gvkText(apiVersion: unknown, kind: unknown): string {
  const text = typeof apiVersion === 'string' ? apiVersion : '';
  const slash = text.indexOf('/');
  const group = slash < 0 ? '' : text.slice(0, slash);
  const version = slash < 0 ? text : text.slice(slash + 1);
  return `${group}/${version}, Kind=${typeof kind === 'string' ? kind : ''}`;
}

/**
 * VerifyAdmissionResponse for an admission/v1 review: a response, the request's uid, the
 * AdmissionReview kind, and patch with patchType only from a mutating webhook.
 */
export function verifyAdmissionResponse(
  uid: string,
  mutating: boolean,
  review: Record<string, unknown>,
): VerifiedResponse {
  const response = review.response;
  if (!isRecord(response)) throw new InvalidResponseError('webhook response was absent');
  const answeredUid = typeof response.uid === 'string' ? response.uid : '';
  if (answeredUid !== uid) {
    throw new InvalidResponseError(
      `expected response.uid=${goQuote(uid)}, got ${goQuote(answeredUid)}`,
    );
  }
  if (review.apiVersion !== ADMISSION_REVIEW_API_VERSION || review.kind !== ADMISSION_REVIEW_KIND) {
    throw new InvalidResponseError(
      `expected webhook response of ${gvkText(ADMISSION_REVIEW_API_VERSION, ADMISSION_REVIEW_KIND)}, got ${gvkText(review.apiVersion, review.kind)}`,
    );
  }
  const patch = typeof response.patch === 'string' ? response.patch : '';
  const hasPatchType = response.patchType !== undefined && response.patchType !== null;
  const patchType = typeof response.patchType === 'string' ? response.patchType : '';
  if (mutating) {
    if (patch !== '' && !hasPatchType) {
      throw new InvalidResponseError('webhook returned response.patch but not response.patchType');
    }
    if (patch === '' && hasPatchType) {
      throw new InvalidResponseError('webhook returned response.patchType but not response.patch');
    }
    if (hasPatchType && patchType === '') {
      throw new InvalidResponseError(
        `webhook returned invalid response.patchType of ${goQuote(patchType)}`,
      );
    }
  } else {
    if (patch !== '')
      throw new InvalidResponseError('validating webhook may not return response.patch');
    if (hasPatchType) {
      throw new InvalidResponseError('validating webhook may not return response.patchType');
    }
  }
  const warnings = Array.isArray(response.warnings)
    ? response.warnings.filter((w): w is string => typeof w === 'string')
    : [];
  return {
    allowed: response.allowed === true,
    patch: mutating ? patch : '',
    patchType: mutating ? patchType : '',
    result: isRecord(response.status) ? (response.status as WebhookResult) : undefined,
    warnings,
  };
}

/**
 * The Status a denial becomes (webhookerrors.ToStatusErr): the webhook's code, 400 when it
 * gives none below 400; Failure; `admission webhook "<name>" denied the request: <message>`,
 * or its reason, or ` without explanation`; its reason and details as given.
 */
export function deniedStatus(webhookName: string, result: WebhookResult | undefined): Status {
  const deniedBy = `admission webhook ${goQuote(webhookName)} denied the request`;
  const code = typeof result?.code === 'number' && result.code >= 400 ? result.code : 400;
  const message = result?.message
    ? `${deniedBy}: ${result.message}`
    : result?.reason
      ? `${deniedBy}: ${result.reason}`
      : `${deniedBy} without explanation`;
  const status: Status = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    code,
  };
  if (result?.reason) status.reason = result.reason;
  if (result?.details) status.details = result.details;
  return status;
}

/** A write as the fake API server received it, for writeAttributes. */
export interface ReceivedWrite {
  kind: ResourceKind;
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
  query: URLSearchParams;
  user: {
    username: string;
    uid?: string;
    groups?: readonly string[];
    extra?: Record<string, string[]>;
  };
  operation: AdmissionOperation;
  object: KubeObject | undefined;
  oldObject: KubeObject | undefined;
  /** A DELETE's body (metav1.DeleteOptions), if it had one. */
  deleteOptions?: unknown;
}

/**
 * What the webhooks are told about a write: the name from the URL (or the object, for a
 * create), the namespace as RequestInfo resolves it (a Namespace's own name for requests on
 * an existing Namespace), the user, and the options: CreateOptions, DeleteOptions as sent,
 * or UpdateOptions, which a patch gets too (upstream's patchToUpdateOptions).
 */
export function writeAttributes(write: ReceivedWrite): AdmissionAttributes {
  const { kind, operation } = write;
  const name = write.name ?? write.object?.metadata.name ?? '';
  const isNamespace = kind.group === '' && kind.plural === 'namespaces';
  const fields: Record<string, unknown> = {};
  if (operation === 'DELETE') {
    const body = write.deleteOptions;
    if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
      for (const [key, value] of Object.entries(body)) {
        if (key !== 'kind' && key !== 'apiVersion') fields[key] = value;
      }
    }
  } else {
    for (const key of ['fieldManager', 'fieldValidation']) {
      const value = write.query.get(key);
      if (value) fields[key] = value;
    }
  }
  const optionsKind =
    operation === 'CREATE'
      ? 'CreateOptions'
      : operation === 'DELETE'
        ? 'DeleteOptions'
        : 'UpdateOptions';
  const { user } = write;
  return {
    operation,
    kind,
    subResource: write.subresource ?? '',
    name,
    namespace: write.namespace ?? (isNamespace && operation !== 'CREATE' ? name : ''),
    object: write.object,
    oldObject: write.oldObject,
    options: { kind: optionsKind, apiVersion: 'meta.k8s.io/v1', ...fields },
    userInfo: {
      username: user.username,
      ...(user.uid !== undefined && { uid: user.uid }),
      groups: [...(user.groups ?? [])],
      ...(user.extra !== undefined && { extra: user.extra }),
    },
  };
}
