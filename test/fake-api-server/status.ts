import type { ResourceKind } from '../../src/api/meta.js';
import { invalidObject } from '../../src/store/object-rules.js';

/** The details of a metav1.Status; kind is the resource (plural) for most errors, as upstream. */
export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: Array<{ reason?: string; message: string; field?: string }>;
}

/** A metav1.Status, the body of every API error (and of some deletes). */
export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

/** Thrown inside request handling; the server answers with its Status. */
export class ApiStatusError extends Error {
  constructor(readonly status: Status) {
    super(status.message);
    this.name = 'ApiStatusError';
  }
}

const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  410: 'Expired',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/** A Failure Status; without a reason, the one the API server uses for the code. */
export function failure(
  code: number,
  message: string,
  reason = REASONS[code] ?? 'Unknown',
  details?: StatusDetails,
): Status {
  const status: Status = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    code,
  };
  if (details) status.details = details;
  return status;
}

/** `certificaterequests.cert-manager.io`, or `secrets` in the core group. */
export function qualifiedResource(group: string, resource: string): string {
  return group === '' ? resource : `${resource}.${group}`;
}

/** Status details naming an object the way NewNotFound and friends do (kind is the plural). */
function objectDetails(group: string, resource: string, name: string): StatusDetails {
  const details: StatusDetails = {};
  if (name !== '') details.name = name;
  if (group !== '') details.group = group;
  details.kind = resource;
  return details;
}

/** 404 for a missing object: `certificaterequests.cert-manager.io "x" not found`. */
export function notFound(kind: ResourceKind, name: string): ApiStatusError {
  return new ApiStatusError(
    failure(
      404,
      `${qualifiedResource(kind.group, kind.plural)} "${name}" not found`,
      'NotFound',
      objectDetails(kind.group, kind.plural, name),
    ),
  );
}

/** 409 AlreadyExists for a create of a taken name. */
export function alreadyExists(kind: ResourceKind, name: string): ApiStatusError {
  return new ApiStatusError(
    failure(
      409,
      `${qualifiedResource(kind.group, kind.plural)} "${name}" already exists`,
      'AlreadyExists',
      objectDetails(kind.group, kind.plural, name),
    ),
  );
}

/** 409 Conflict; the default detail is the stale-resourceVersion one. */
export function conflict(
  kind: ResourceKind,
  name: string,
  detail = 'the object has been modified; please apply your changes to the latest version and try again',
): ApiStatusError {
  return new ApiStatusError(
    failure(
      409,
      `Operation cannot be fulfilled on ${qualifiedResource(kind.group, kind.plural)} "${name}": ${detail}`,
      'Conflict',
      objectDetails(kind.group, kind.plural, name),
    ),
  );
}

/** 422 Invalid, named by group kind as NewInvalid does: `CertificateRequest.cert-manager.io "x" is invalid: …`. */
export function invalid(
  kind: ResourceKind,
  name: string,
  field: string,
  detail: string,
): ApiStatusError {
  const groupKind = kind.group === '' ? kind.kind : `${kind.kind}.${kind.group}`;
  const message = `${field}: ${detail}`;
  const details: StatusDetails = { name, kind: kind.kind };
  if (kind.group !== '') details.group = kind.group;
  details.causes = [{ reason: 'FieldValueInvalid', message, field }];
  return new ApiStatusError(
    failure(422, `${groupKind} "${name}" is invalid: ${message}`, 'Invalid', details),
  );
}

// field.ErrorType's String() and its CauseType, for the causes of a 422.
const FIELD_ERROR_REASONS: Readonly<Record<string, string>> = {
  'Required value': 'FieldValueRequired',
  'Invalid value': 'FieldValueInvalid',
  Forbidden: 'FieldValueForbidden',
  'Too long': 'FieldValueTooLong',
  'Unsupported value': 'FieldValueNotSupported',
  'Duplicate value': 'FieldValueDuplicate',
};

/**
 * 422 Invalid for field errors in their string form (`spec.x: Invalid value: "y": detail`), as
 * apierrors.NewInvalid builds it: the message as invalidObject words it, and one cause per
 * error with its field, its reason and the error without the field.
 */
export function invalidFields(
  kind: ResourceKind,
  name: string,
  errors: readonly string[],
): ApiStatusError {
  const causes = [...new Set(errors)].map((error) => {
    const match =
      /^(.*?): (Required value|Invalid value|Forbidden|Too long|Unsupported value|Duplicate value)\b/.exec(
        error,
      );
    const field = match?.[1] ?? '';
    return {
      reason: FIELD_ERROR_REASONS[match?.[2] ?? ''] ?? 'FieldValueInvalid',
      message: field === '' ? error : error.slice(field.length + 2),
      field,
    };
  });
  const details: StatusDetails = { name, kind: kind.kind };
  if (kind.group !== '') details.group = kind.group;
  details.causes = causes;
  return new ApiStatusError(
    failure(422, invalidObject(kind, name, errors).message, 'Invalid', details),
  );
}

/**
 * 403 from an admission plugin (admission.NewForbidden): `<resource> "<name>" is forbidden:
 * <why>`, e.g. the ClusterTrustBundleAttest plugin's refusal.
 */
export function admissionForbidden(kind: ResourceKind, name: string, why: string): ApiStatusError {
  return new ApiStatusError(
    failure(
      403,
      `${qualifiedResource(kind.group, kind.plural)} "${name}" is forbidden: ${why}`,
      'Forbidden',
      objectDetails(kind.group, kind.plural, name),
    ),
  );
}

/** 403 with the RBAC denial message shape of the API server. */
export function forbidden(request: {
  user: string;
  verb: string;
  apiGroup: string;
  resource: string;
  subresource?: string | undefined;
  namespace?: string | undefined;
  name?: string | undefined;
}): ApiStatusError {
  const resource = request.subresource
    ? `${request.resource}/${request.subresource}`
    : request.resource;
  const scope = request.namespace
    ? `in the namespace "${request.namespace}"`
    : 'at the cluster scope';
  const why = `User "${request.user}" cannot ${request.verb} resource "${resource}" in API group "${request.apiGroup}" ${scope}`;
  const what = qualifiedResource(request.apiGroup, request.resource);
  const subject = request.name ? `${what} "${request.name}"` : what;
  return new ApiStatusError(
    failure(
      403,
      `${subject} is forbidden: ${why}`,
      'Forbidden',
      objectDetails(request.apiGroup, request.resource, request.name ?? ''),
    ),
  );
}

/** 400 BadRequest with the given message. */
export function badRequest(message: string): ApiStatusError {
  return new ApiStatusError(failure(400, message, 'BadRequest'));
}

/** 500 InternalError as NewInternalError words it. */
export function internalError(message: string): ApiStatusError {
  return new ApiStatusError(
    failure(500, `Internal error occurred: ${message}`, 'InternalError', {
      causes: [{ message }],
    }),
  );
}

/** The watch ERROR event's object for a resourceVersion older than the history held. */
export function expired(message: string): Status {
  return failure(410, message, 'Expired');
}

/** A Success Status, what deletes of most built-in kinds return. */
export function success(kind: ResourceKind, name: string, uid: string | undefined): Status {
  const details = objectDetails(kind.group, kind.plural, name);
  if (uid) details.uid = uid;
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details, code: 200 };
}
