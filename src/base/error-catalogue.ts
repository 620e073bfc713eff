/**
 * The canonical gRPC status names (grpc-js's `status` enum, without OK). Named here rather than
 * imported so that base stays free of dependencies; the driver maps a name to grpc-js's number.
 */
export type GrpcStatusName =
  | 'CANCELLED'
  | 'UNKNOWN'
  | 'INVALID_ARGUMENT'
  | 'DEADLINE_EXCEEDED'
  | 'NOT_FOUND'
  | 'ALREADY_EXISTS'
  | 'PERMISSION_DENIED'
  | 'RESOURCE_EXHAUSTED'
  | 'FAILED_PRECONDITION'
  | 'ABORTED'
  | 'OUT_OF_RANGE'
  | 'UNIMPLEMENTED'
  | 'INTERNAL'
  | 'UNAVAILABLE'
  | 'DATA_LOSS'
  | 'UNAUTHENTICATED';

/** How each edge answers an error of one kind. */
export interface ErrorKindSpec {
  /** What went wrong, in a few words. */
  readonly summary: string;
  /** The status a CSI (gRPC) client gets. */
  readonly grpcStatus: GrpcStatusName;
  /** The status an HTTP client of the admission webhook gets. */
  readonly httpStatus: number;
  /** The exit status of a `cert-csi` command that ends with it. */
  readonly exitCode: number;
}

/**
 * Every kind of error cert-csi raises, by its stable code. Each error class says its kind in
 * an `errorKind` property (see KindedError) and the gRPC, HTTP and CLI edges each map from here
 * in one function, so an error is answered alike wherever it surfaces. Errors a publish or an
 * unpublish can meet answer the CSI client INTERNAL unless the driver singled them out before
 * this catalogue existed (issuance, republish, target path, invalid request), and 500 over
 * HTTP; the columns of an edge an error cannot reach follow the usual gRPC/HTTP pairing. A
 * command exits 1 on any error but an unusable command line, which exits 2 (as Go's flag
 * package and most Unix tools do).
 */
export const errorCatalogue = {
  CERT_CSI_INTERNAL_ERROR: {
    summary: 'an error of no kind: a fault of cert-csi or of something it runs on',
    grpcStatus: 'INTERNAL',
    httpStatus: 500,
    exitCode: 1,
  },
  // The command line.
  CERT_CSI_INVALID_COMMAND_LINE: {
    summary: 'a command line that cannot be used: an unknown command or flag',
    grpcStatus: 'INVALID_ARGUMENT',
    httpStatus: 400,
    exitCode: 2,
  },
  CERT_CSI_PLUGIN_CALL_FAILED: {
    summary: 'the CSI plugin a command called refused, failed or did not answer',
    grpcStatus: 'UNKNOWN',
    httpStatus: 502,
    exitCode: 1,
  },
  CERT_CSI_MANIFEST_INVALID: {
    summary: 'a manifest given to the node cannot be loaded',
    grpcStatus: 'INVALID_ARGUMENT',
    httpStatus: 400,
    exitCode: 1,
  },
  // CSI requests and volumes.
  CERT_CSI_INVALID_CSI_REQUEST: {
    summary: 'a CSI request with a missing or invalid field',
    grpcStatus: 'INVALID_ARGUMENT',
    httpStatus: 400,
    exitCode: 1,
  },
  CERT_CSI_CSV_MALFORMED: {
    summary: 'a volume attribute list that is not valid CSV',
    grpcStatus: 'INVALID_ARGUMENT',
    httpStatus: 400,
    exitCode: 1,
  },
  CERT_CSI_RELOAD_REFUSED: {
    summary: 'reload attributes this node does not serve (signals off, a PID file in cluster mode)',
    grpcStatus: 'INVALID_ARGUMENT',
    httpStatus: 400,
    exitCode: 1,
  },
  CERT_CSI_REPUBLISH_CONFLICT: {
    summary: 'a volume already published with other attributes or at another target',
    grpcStatus: 'ALREADY_EXISTS',
    httpStatus: 409,
    exitCode: 1,
  },
  CERT_CSI_TARGET_PATH_REFUSED: {
    summary: "a target path the node's state forbids publishing to or unpublishing from",
    grpcStatus: 'FAILED_PRECONDITION',
    httpStatus: 400,
    exitCode: 1,
  },
  CERT_CSI_VOLUME_FAILED: {
    summary: "a volume's files, metadata or mount could not be made, read or removed",
    grpcStatus: 'INTERNAL',
    httpStatus: 500,
    exitCode: 1,
  },
  // Issuance of a volume's certificate.
  CERT_CSI_ISSUANCE_DENIED: {
    summary: "the volume's CertificateRequest was denied",
    grpcStatus: 'PERMISSION_DENIED',
    httpStatus: 403,
    exitCode: 1,
  },
  CERT_CSI_ISSUANCE_FAILED: {
    summary: "the volume's certificate cannot be issued: a failed request, or its pod not ready",
    grpcStatus: 'FAILED_PRECONDITION',
    httpStatus: 400,
    exitCode: 1,
  },
  CERT_CSI_ISSUANCE_TIMED_OUT: {
    summary: "the volume's certificate did not come before the issuance deadline",
    grpcStatus: 'DEADLINE_EXCEEDED',
    httpStatus: 504,
    exitCode: 1,
  },
  CERT_CSI_ISSUANCE_ABORTED: {
    summary: 'an issuance stopped because its volume was unpublished or the plugin stopped',
    grpcStatus: 'ABORTED',
    httpStatus: 409,
    exitCode: 1,
  },
  CERT_CSI_ISSUED_CERTIFICATE_INVALID: {
    summary: 'the certificate an issuer returned does not fit the request',
    grpcStatus: 'INTERNAL',
    httpStatus: 500,
    exitCode: 1,
  },
  CERT_CSI_REQUEST_WAIT_ENDED: {
    summary: 'a wait for a CertificateRequest ended without an answer',
    grpcStatus: 'INTERNAL',
    httpStatus: 500,
    exitCode: 1,
  },
  CERT_CSI_DEADLINE_EXCEEDED: {
    summary: 'an operation ran past its deadline',
    grpcStatus: 'INTERNAL',
    httpStatus: 500,
    exitCode: 1,
  },
  // Files, locks, the API.
  CERT_CSI_FILE_OPERATION_FAILED: {
    summary: 'a file, directory or command on the node failed',
    grpcStatus: 'INTERNAL',
    httpStatus: 500,
    exitCode: 1,
  },
  CERT_CSI_FILE_REFUSED: {
    summary: 'a file not read: not a regular file, or larger than allowed',
    grpcStatus: 'INTERNAL',
    httpStatus: 500,
    exitCode: 1,
  },
  CERT_CSI_LOCK_HELD: {
    summary: 'a directory another cert-csi process holds',
    grpcStatus: 'ABORTED',
    httpStatus: 409,
    exitCode: 1,
  },
  CERT_CSI_API_REQUEST_FAILED: {
    summary: 'a request to the resource store (the API server or the embedded store) failed',
    grpcStatus: 'INTERNAL',
    httpStatus: 500,
    exitCode: 1,
  },
  // Keys, certificates and issuers.
  CERT_CSI_PKI_FAILED: {
    summary: 'a key, certificate or certificate request cannot be made or read',
    grpcStatus: 'INTERNAL',
    httpStatus: 500,
    exitCode: 1,
  },
  CERT_CSI_CSR_SIGNATURE_INVALID: {
    summary: 'a certificate request whose signature does not verify with its own key',
    grpcStatus: 'INVALID_ARGUMENT',
    httpStatus: 400,
    exitCode: 1,
  },
  CERT_CSI_POD_KEY_UNUSABLE: {
    summary: "a PodCertificateRequest's key or proof of possession that cannot be used",
    grpcStatus: 'INVALID_ARGUMENT',
    httpStatus: 400,
    exitCode: 1,
  },
  CERT_CSI_EMBEDDED_CA_LOST: {
    summary: "an embedded issuer's CA that cannot be used and needs the operator's word",
    grpcStatus: 'FAILED_PRECONDITION',
    httpStatus: 400,
    exitCode: 1,
  },
  CERT_CSI_ISSUER_NOT_READY: {
    summary: 'an issuer not ready yet: retried',
    grpcStatus: 'UNAVAILABLE',
    httpStatus: 503,
    exitCode: 1,
  },
  CERT_CSI_CERTIFICATE_NOT_FOUND: {
    summary: 'no Certificate of that namespace and name',
    grpcStatus: 'NOT_FOUND',
    httpStatus: 404,
    exitCode: 1,
  },
  CERT_CSI_DUPLICATE_REQUESTS: {
    summary: 'more than one CertificateRequest for one revision of a Certificate: retried',
    grpcStatus: 'ABORTED',
    httpStatus: 409,
    exitCode: 1,
  },
  // The admission webhook.
  CERT_CSI_REQUEST_TARGET_MALFORMED: {
    summary: 'an HTTP request target that is not a path',
    grpcStatus: 'INVALID_ARGUMENT',
    httpStatus: 400,
    exitCode: 1,
  },
  CERT_CSI_ENDPOINT_NOT_FOUND: {
    summary: 'an HTTP path the webhook does not serve',
    grpcStatus: 'NOT_FOUND',
    httpStatus: 404,
    exitCode: 1,
  },
  CERT_CSI_HTTP_METHOD_NOT_ALLOWED: {
    summary: 'an HTTP method the endpoint does not answer',
    grpcStatus: 'UNIMPLEMENTED',
    httpStatus: 405,
    exitCode: 1,
  },
  CERT_CSI_CONTENT_TYPE_UNSUPPORTED: {
    summary: 'a review body that is not sent as application/json',
    grpcStatus: 'INVALID_ARGUMENT',
    httpStatus: 415,
    exitCode: 1,
  },
  CERT_CSI_CONTROL_LINE_TOO_LONG: {
    summary: 'a line on the control socket longer than the most read for one',
    grpcStatus: 'RESOURCE_EXHAUSTED',
    httpStatus: 413,
    exitCode: 1,
  },
  CERT_CSI_REVIEW_TOO_LARGE: {
    summary: 'a review body larger than the webhook takes',
    grpcStatus: 'RESOURCE_EXHAUSTED',
    httpStatus: 413,
    exitCode: 1,
  },
  CERT_CSI_WEBHOOK_BUSY: {
    summary: 'the webhook holds as many large reviews as it can: retry',
    grpcStatus: 'UNAVAILABLE',
    httpStatus: 503,
    exitCode: 1,
  },
  CERT_CSI_REVIEW_PAST_JSON_LIMITS: {
    summary: 'a review body nested too deep or with too many or too long members',
    grpcStatus: 'INVALID_ARGUMENT',
    httpStatus: 400,
    exitCode: 1,
  },
  CERT_CSI_REVIEW_BODY_INCOMPLETE: {
    summary: 'a review request that ended before its body did',
    grpcStatus: 'CANCELLED',
    httpStatus: 400,
    exitCode: 1,
  },
  CERT_CSI_REVIEW_MALFORMED: {
    summary: 'a body that is not an admission.k8s.io/v1 AdmissionReview with a usable request',
    grpcStatus: 'INVALID_ARGUMENT',
    httpStatus: 400,
    exitCode: 1,
  },
  CERT_CSI_REVIEW_OBJECT_MISSING: {
    summary: 'a review without the object its operation needs',
    grpcStatus: 'INVALID_ARGUMENT',
    httpStatus: 400,
    exitCode: 1,
  },
  CERT_CSI_OBJECT_FIELD_WRONG_TYPE: {
    summary: 'an object field that is not of its type',
    grpcStatus: 'INVALID_ARGUMENT',
    httpStatus: 400,
    exitCode: 1,
  },
} as const satisfies Record<string, ErrorKindSpec>;

/** The stable code of a kind of error, e.g. `CERT_CSI_ISSUANCE_DENIED`. */
export type ErrorKind = keyof typeof errorCatalogue;

/** An error that says its kind: every error class of cert-csi is one. */
export interface KindedError {
  readonly errorKind: ErrorKind;
}

/** The kind err declares, or undefined for a thrown value of no known kind. */
export function kindOf(err: unknown): ErrorKind | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const kind = (err as { errorKind?: unknown }).errorKind;
  return typeof kind === 'string' && Object.hasOwn(errorCatalogue, kind)
    ? (kind as ErrorKind)
    : undefined;
}

/** How the edges answer err: its kind's entry, CERT_CSI_INTERNAL_ERROR's for one of no kind. */
export function errorSpecOf(err: unknown): ErrorKindSpec {
  return errorCatalogue[kindOf(err) ?? 'CERT_CSI_INTERNAL_ERROR'];
}
