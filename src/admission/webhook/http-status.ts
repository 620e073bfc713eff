import { errorSpecOf } from '../../base/error-catalogue.js';

/** The HTTP status the webhook answers err with: its kind's, 500 for an error of no kind. */
export function httpStatusOf(err: unknown): number {
  return errorSpecOf(err).httpStatus;
}

/** The status of the webhook's own failures. */
export const FAILURE_STATUS = httpStatusOf(undefined);

/**
 * Whether an error answered with status is a refusal told to the client with its message: a
 * 4xx (the request's fault) or 503 (busy: retry). Any other status is the webhook's own
 * failure, answered FAILURE_STATUS without the error's text, which may name internals.
 */
export function isRefusalStatus(status: number): boolean {
  return status < 500 || status === 503;
}
