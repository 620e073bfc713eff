import type { ErrorKind } from '../base/error-catalogue.js';

/** A CSI request the driver refuses before acting on it: a field missing or invalid. */
export class CsiError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CsiError';
  }

  get errorKind(): ErrorKind {
    return 'CERT_CSI_INVALID_CSI_REQUEST';
  }
}

/** The error of a request with a missing or invalid field: InvalidArgument to the client. */
export function invalidArgument(message: string): CsiError {
  return new CsiError(message);
}
