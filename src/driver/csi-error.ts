import { status } from '@grpc/grpc-js';

/** An error that reaches the CSI client with a chosen gRPC status code. */
export class CsiError extends Error {
  constructor(
    readonly code: status,
    message: string,
  ) {
    super(message);
    this.name = 'CsiError';
  }
}

/** Shorthand for an InvalidArgument error. */
export function invalidArgument(message: string): CsiError {
  return new CsiError(status.INVALID_ARGUMENT, message);
}
