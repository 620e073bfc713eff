import type {
  ConfigurationOptions,
  RequestContext,
  ResponseContext,
} from '@kubernetes/client-node';
import type { Clock } from '../../base/clock.js';
import { Deadline, untilAborted } from '../../base/deadline.js';
import { errorMessage } from '../../base/error-message.js';
import { StoreError, type StoreErrorReason } from '../errors.js';
import { ApiException, Observable } from './client-node.js';
import { RequestObservation } from './request-telemetry.js';

// One request to the API server through client-node: cancelled at a deadline, observed, and
// its failure turned into a StoreError. Shared by the store and discovery.

/** The default limit of one API request (client-go has none; kubectl's --request-timeout neither). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/**
 * Per-request client options that hand signal to the HTTP request, so aborting it cancels it,
 * and tell observation (when given) what was sent and answered.
 */
function cancelledBy(signal: AbortSignal, observation?: RequestObservation): ConfigurationOptions {
  return {
    middleware: [
      {
        pre: (context: RequestContext) => {
          context.setSignal(signal);
          observation?.sent(context.getHttpMethod(), context.getUrl());
          return new Observable(Promise.resolve(context));
        },
        post: (context: ResponseContext) => {
          observation?.answered(context.httpStatusCode);
          return new Observable(Promise.resolve(context));
        },
      },
    ],
    middlewareMergeStrategy: 'append',
  };
}

/** The Status body of an API error, when the server sent one. */
function statusOf(err: ApiException<unknown>): { reason?: string; message?: string } {
  const body = err.body;
  const parsed: unknown =
    typeof body === 'string'
      ? (() => {
          try {
            return JSON.parse(body);
          } catch {
            return undefined;
          }
        })()
      : body;
  if (parsed && typeof parsed === 'object') {
    const { reason, message } = parsed as { reason?: unknown; message?: unknown };
    return {
      ...(typeof reason === 'string' ? { reason } : {}),
      ...(typeof message === 'string' ? { message } : {}),
    };
  }
  return {};
}

/** The StoreError reason of an HTTP status code (and the Status reason, which tells 409s apart). */
export function reasonOf(code: number, statusReason: string | undefined): StoreErrorReason {
  switch (code) {
    case 404:
      return 'NotFound';
    case 409:
      return statusReason === 'AlreadyExists' ? 'AlreadyExists' : 'Conflict';
    case 410:
      return 'Gone';
    case 403:
    case 401:
      return 'Forbidden';
    case 400:
      return 'BadRequest';
    case 422:
      return 'Invalid';
    default:
      return 'InternalError';
  }
}

/** Turns what the client threw into a StoreError that says which call failed and why. */
export function toStoreError(err: unknown, what: string): StoreError {
  if (err instanceof StoreError) return err;
  if (err instanceof ApiException) {
    const status = statusOf(err);
    const reason = reasonOf(err.code, status.reason);
    return new StoreError(reason, `${what}: ${status.message ?? `HTTP ${err.code}`}`);
  }
  const message = errorMessage(err);
  return new StoreError('InternalError', `${what}: ${message}`);
}

/**
 * Runs one client-node request within timeoutMs: a Deadline on the clock (a plain timer, which
 * no GC can drop) cancels the HTTP request and fails the call even if the client ignored the
 * signal. Failures are StoreErrors naming what was asked.
 */
export async function callWithin<R>(
  clock: Clock,
  timeoutMs: number,
  what: string,
  request: (options: ConfigurationOptions) => Promise<R>,
): Promise<R> {
  const deadline = new Deadline(clock, timeoutMs);
  const observation = RequestObservation.ifObserved();
  return untilAborted(request(cancelledBy(deadline.signal, observation)), deadline.signal).then(
    (result) => {
      deadline.clear();
      observation?.finish();
      return result;
    },
    (err: unknown) => {
      deadline.clear();
      observation?.finish();
      if (deadline.exceeded) {
        // InternalError, as for a refused or broken connection: callers retry it with backoff.
        throw new StoreError(
          'InternalError',
          `${what}: no answer from the API server within ${timeoutMs} ms`,
        );
      }
      throw toStoreError(err, what);
    },
  );
}

/**
 * True when err is the API server's 404 for a resource it does not serve at that version
 * (`the server could not find the requested resource`, no object named in its details), as
 * opposed to a 404 for a missing object or namespace, whose Status names it.
 */
export function isResourceNotServed(err: unknown): boolean {
  if (!(err instanceof ApiException) || err.code !== 404) return false;
  const body: unknown = typeof err.body === 'string' ? parsedJson(err.body) : err.body;
  const details = (body as { details?: { name?: unknown } } | undefined)?.details;
  return typeof details?.name !== 'string' || details.name === '';
}

function parsedJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
