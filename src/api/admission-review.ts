import { quoted } from './echoed-value.js';
import type { KubeObject } from './meta.js';
import type { UserInfo } from './user-info.js';

/** The apiVersion of the AdmissionReviews the webhook reads and answers (admission.k8s.io/v1). */
export const ADMISSION_REVIEW_API_VERSION = 'admission.k8s.io/v1';
export const ADMISSION_REVIEW_KIND = 'AdmissionReview';

/** The operations an AdmissionRequest carries. */
export const ADMISSION_OPERATIONS = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'] as const;
export type AdmissionOperation = (typeof ADMISSION_OPERATIONS)[number];

/** A resource in a group and version (metav1.GroupVersionResource). */
export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

/** What the API server asks a webhook about one write (admission/v1 AdmissionRequest), the parts read here. */
export interface AdmissionRequest {
  uid: string;
  /** The resource written, as the webhook configuration matched it. */
  resource: GroupVersionResource;
  subResource?: string;
  /** The resource the client wrote to (differs from resource after a version conversion). */
  requestResource?: GroupVersionResource;
  requestSubResource?: string;
  name?: string;
  namespace?: string;
  operation: AdmissionOperation;
  userInfo: UserInfo;
  object?: KubeObject;
  oldObject?: KubeObject;
  dryRun?: boolean;
}

/** The status of a refusal (a metav1.Status). */
export interface AdmissionStatus {
  status: 'Failure';
  code: number;
  reason: string;
  message: string;
  metadata: Record<string, never>;
}

/** A webhook's answer (admission/v1 AdmissionResponse). */
export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: AdmissionStatus;
  /** base64 of a JSON Patch (RFC 6902). */
  patch?: string;
  patchType?: 'JSONPatch';
}

/** The envelope of both directions: the request in, the same review with a response out. */
export interface AdmissionReview {
  apiVersion: typeof ADMISSION_REVIEW_API_VERSION;
  kind: typeof ADMISSION_REVIEW_KIND;
  request?: AdmissionRequest;
  response?: AdmissionResponse;
}

/** A review that cannot be answered: not an admission.k8s.io/v1 AdmissionReview with a usable request. */
export class MalformedReviewError extends Error {
  override readonly name = 'MalformedReviewError';

  // A kind of base/error-catalogue.ts, which api (the layer above base) cannot import: the
  // catalogue's test checks that the code exists.
  get errorKind() {
    return 'CERT_CSI_REVIEW_MALFORMED' as const;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value for a message: a string quoted and shortened, anything else by its JSON type only. */
function shown(value: unknown): string {
  if (typeof value === 'string') return quoted(value);
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function need(condition: boolean, message: string): asserts condition {
  if (!condition) throw new MalformedReviewError(message);
}

function optionalString(record: Record<string, unknown>, field: string, where: string): void {
  const value = record[field];
  need(value === undefined || typeof value === 'string', `${where}.${field} must be a string`);
}

function checkResource(value: unknown, where: string): void {
  need(isRecord(value), `${where} must be an object with group, version and resource`);
  for (const field of ['group', 'version', 'resource']) {
    need(typeof value[field] === 'string', `${where}.${field} must be a string`);
  }
  need(value.resource !== '', `${where}.resource must not be empty`);
}

function checkObject(value: unknown, where: string): void {
  if (value === undefined || value === null) return;
  need(
    isRecord(value) && isRecord(value.metadata),
    `${where} must be a Kubernetes object with metadata`,
  );
}

function checkUserInfo(value: unknown): void {
  need(isRecord(value), 'request.userInfo must be an object');
  need(typeof value.username === 'string', 'request.userInfo.username must be a string');
  optionalString(value, 'uid', 'request.userInfo');
  const groups = value.groups;
  need(
    groups === undefined || (Array.isArray(groups) && groups.every((g) => typeof g === 'string')),
    'request.userInfo.groups must be a list of strings',
  );
  const extra = value.extra;
  need(
    extra === undefined ||
      (isRecord(extra) &&
        Object.values(extra).every(
          (v) => Array.isArray(v) && v.every((item) => typeof item === 'string'),
        )),
    'request.userInfo.extra must map strings to lists of strings',
  );
}

/**
 * The request of an AdmissionReview body, checked field by field: a body that is not an
 * admission.k8s.io/v1 AdmissionReview, or whose request lacks what every answer needs (uid,
 * operation, resource, the requester), throws MalformedReviewError naming the field.
 */
export function readAdmissionReview(body: unknown): AdmissionRequest {
  need(isRecord(body), 'the body must be a JSON object (an AdmissionReview)');
  need(
    body.apiVersion === ADMISSION_REVIEW_API_VERSION && body.kind === ADMISSION_REVIEW_KIND,
    `expected apiVersion ${ADMISSION_REVIEW_API_VERSION} and kind ${ADMISSION_REVIEW_KIND}, got ${shown(body.apiVersion)} and ${shown(body.kind)}`,
  );
  const request = body.request;
  need(isRecord(request), 'request must be an object');
  need(
    typeof request.uid === 'string' && request.uid !== '',
    'request.uid must be a non-empty string',
  );
  need(
    (ADMISSION_OPERATIONS as readonly unknown[]).includes(request.operation),
    `request.operation must be one of ${ADMISSION_OPERATIONS.join(', ')}, got ${shown(request.operation)}`,
  );
  checkResource(request.resource, 'request.resource');
  if (request.requestResource !== undefined) {
    checkResource(request.requestResource, 'request.requestResource');
  }
  for (const field of ['subResource', 'requestSubResource', 'name', 'namespace']) {
    optionalString(request, field, 'request');
  }
  checkUserInfo(request.userInfo);
  checkObject(request.object, 'request.object');
  checkObject(request.oldObject, 'request.oldObject');
  need(
    request.dryRun === undefined || typeof request.dryRun === 'boolean',
    'request.dryRun must be a boolean',
  );
  // The API server sends `"object": null` where there is none (a DELETE has no new object).
  const { object, oldObject, ...rest } = request;
  return {
    ...(rest as unknown as AdmissionRequest),
    ...(isRecord(object) ? { object: object as unknown as KubeObject } : {}),
    ...(isRecord(oldObject) ? { oldObject: oldObject as unknown as KubeObject } : {}),
  };
}

/** The resource and subresource the client wrote to: requestResource when the server sent it, else resource. */
export function writtenResource(request: AdmissionRequest): {
  resource: GroupVersionResource;
  subResource: string;
} {
  return request.requestResource
    ? { resource: request.requestResource, subResource: request.requestSubResource ?? '' }
    : { resource: request.resource, subResource: request.subResource ?? '' };
}
