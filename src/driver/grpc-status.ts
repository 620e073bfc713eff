import { status } from '@grpc/grpc-js';
import { errorSpecOf } from '../base/error-catalogue.js';

/** The gRPC status a CSI client gets for err: its kind's, INTERNAL for an error of no kind. */
export function grpcStatusOf(err: unknown): status {
  return status[errorSpecOf(err).grpcStatus];
}
