import type { ErrorKind } from '../base/error-catalogue.js';

/** The Kubernetes Status reasons the store reports; the Kubernetes backend maps HTTP codes onto them. */
export type StoreErrorReason =
  | 'BadRequest'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Invalid'
  | 'Gone'
  | 'Forbidden'
  | 'InternalError';

const httpCodes: Record<StoreErrorReason, number> = {
  // A request the server cannot parse (a malformed selector), as opposed to an Invalid object.
  BadRequest: 400,
  NotFound: 404,
  AlreadyExists: 409,
  Conflict: 409,
  Invalid: 422,
  Gone: 410,
  Forbidden: 403,
  InternalError: 500,
};

/** An API error with its Kubernetes reason and HTTP code. */
export class StoreError extends Error {
  readonly reason: StoreErrorReason;
  readonly code: number;

  constructor(reason: StoreErrorReason, message: string) {
    super(message);
    this.name = 'StoreError';
    this.reason = reason;
    this.code = httpCodes[reason];
  }

  get errorKind(): ErrorKind {
    return 'CERT_CSI_API_REQUEST_FAILED';
  }
}

/** True when err is a StoreError with the given reason. */
export function isStoreError(err: unknown, reason: StoreErrorReason): err is StoreError {
  return err instanceof StoreError && err.reason === reason;
}
