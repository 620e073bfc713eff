import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import {
  ADMISSION_REVIEW_API_VERSION,
  ADMISSION_REVIEW_KIND,
  type AdmissionRequest,
  type AdmissionResponse,
  type AdmissionReview,
  MalformedReviewError,
  readAdmissionReview,
  writtenResource,
} from '../../api/admission-review.js';
import { quoted, shortened } from '../../api/echoed-value.js';
import type { Logger } from '../../api/logger.js';
import { cappedText } from '../../base/capped-text.js';
import { asError, errorMessage } from '../../base/error-message.js';
import { requestPath } from '../../base/request-path.js';
import { SerialTurns } from '../../base/serial-turns.js';
import { ByteBudget } from './byte-budget.js';
import { FAILURE_STATUS, httpStatusOf, isRefusalStatus } from './http-status.js';
import { type HeldBytes, HttpRefusal, parseReviewBody, readReviewBody } from './review-body.js';
import { type AdmissionServerLimits, DEFAULT_SERVER_LIMITS } from './server-limits.js';

/** What a webhook decided about one request. */
export type AdmissionDecision =
  /** Admitted; a mutating answer may carry JSON Patch operations (RFC 6902). */
  | { allowed: true; patch?: readonly object[] }
  /** Refused, with the HTTP code, reason and message the API server hands its client. */
  | { allowed: false; code: number; reason: string; message: string };

/** The two endpoints' policies: each answers one AdmissionRequest. */
export interface AdmissionHandlers {
  validate(request: AdmissionRequest): Promise<AdmissionDecision>;
  mutate(request: AdmissionRequest): Promise<AdmissionDecision>;
}

/** A PEM private key and the certificate chain to serve with it. */
export interface ServingKeyPair {
  keyPem: string;
  certificatePem: string;
}

export interface AdmissionServerOptions {
  handlers: AdmissionHandlers;
  certificate: ServingKeyPair;
  logger: Logger;
  /** TCP port; 0 picks a free one. */
  port: number;
  /** Address to listen on (default: every address). */
  host?: string;
  /** Whether /readyz answers 200, and why not (default: always ready). */
  readiness?: () => { ready: true } | { ready: false; why: string };
  /** How long close() lets requests in flight finish before it cuts them (default 5 s). */
  drainMs?: number;
  /** What clients can make the server hold (default DEFAULT_SERVER_LIMITS, each field). */
  limits?: Partial<AdmissionServerLimits>;
}

/** Larger bodies are refused (DEFAULT_SERVER_LIMITS.maxBodyBytes). */
export const MAX_REVIEW_BYTES = DEFAULT_SERVER_LIMITS.maxBodyBytes;
const DEFAULT_DRAIN_MS = 5_000;
/** Connections dropped at the limit are logged at most once per this long. */
const DROP_LOG_INTERVAL_MS = 10_000;
const ENDPOINTS = ['validate', 'mutate'] as const;
type Endpoint = (typeof ENDPOINTS)[number];

/**
 * The admission webhook's HTTPS server: POST /validate and /mutate take an AdmissionReview v1
 * and answer it with the same uid; GET /livez and /readyz are its probes. A body that is not a
 * usable review gets HTTP 400 with a message saying what is wrong. Each review is logged on
 * one line (uid, operation, resource, object name, user, outcome, latency), never its objects.
 * The serving certificate is replaced in place (setCertificate): the listener never restarts.
 * What a client can make it hold is bounded (AdmissionServerLimits): connections, the size
 * and structure of each body, the bytes of all bodies in flight, and how long each stage of a
 * connection may take; refusal messages are cut at MESSAGE_LIMIT_BYTES.
 */
export class AdmissionWebhookServer {
  private readonly inFlight = new Set<Promise<void>>();
  private readonly budget: ByteBudget;
  private readonly largeBodies = new SerialTurns();
  private dropped = 0;
  private lastDropLog = Number.NEGATIVE_INFINITY;

  private constructor(
    private readonly server: Server,
    private readonly options: AdmissionServerOptions,
    private readonly limits: AdmissionServerLimits,
  ) {
    this.budget = new ByteBudget(limits.sharedBodyBytes);
  }

  /** Starts listening; resolves once the port is bound. */
  static async start(options: AdmissionServerOptions): Promise<AdmissionWebhookServer> {
    const limits = { ...DEFAULT_SERVER_LIMITS, ...options.limits };
    const server = createServer({
      key: options.certificate.keyPem,
      cert: options.certificate.certificatePem,
      minVersion: 'TLSv1.2',
      handshakeTimeout: limits.handshakeTimeoutMs,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // Node checks the two timeouts above only this often (30 s unless told).
      connectionsCheckingInterval: limits.timeoutCheckIntervalMs,
    });
    server.maxConnections = limits.maxConnections;
    const webhook = new AdmissionWebhookServer(server, options, limits);
    server.on('drop', () => webhook.logDrop());
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const handled = webhook.handle(req, res).catch((err) => webhook.failed(res, err));
      webhook.inFlight.add(handled);
      void handled.finally(() => webhook.inFlight.delete(handled));
    });
    server.listen(options.port, options.host);
    await once(server, 'listening');
    return webhook;
  }

  /** The bound port. */
  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Serves key pair to every TLS handshake from now on; open connections keep theirs. */
  setCertificate(pair: ServingKeyPair): void {
    this.server.setSecureContext({ key: pair.keyPem, cert: pair.certificatePem });
  }

  /**
   * Stops accepting connections, lets the requests in flight finish (at most drainMs), then
   * closes every connection.
   */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    const drainMs = this.options.drainMs ?? DEFAULT_DRAIN_MS;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.inFlight]),
      new Promise((resolve) => {
        timer = setTimeout(resolve, drainMs);
      }),
    ]);
    clearTimeout(timer);
    this.server.closeAllConnections();
    await closed;
  }

  /**
   * A request whose handling failed past the handler (its answer could not be written): a
   * 500 without the cause, which is logged, or the connection cut when the answer had begun.
   */
  private failed(res: ServerResponse, err: unknown): void {
    const error = asError(err);
    this.options.logger.error(
      { errorType: error.name, error: shortened(error.message) },
      'admission request failed',
    );
    if (res.headersSent) res.destroy();
    else
      sendText(
        res,
        FAILURE_STATUS,
        'internal error: the webhook failed to answer; its log has the cause',
      );
  }

  /** Logs that connections are being dropped at maxConnections, at most once per interval. */
  private logDrop(): void {
    this.dropped++;
    const now = performance.now();
    if (now - this.lastDropLog < DROP_LOG_INTERVAL_MS) return;
    this.lastDropLog = now;
    this.options.logger.warn(
      { maxConnections: this.limits.maxConnections, dropped: this.dropped },
      'connection limit reached: new connections are closed',
    );
    this.dropped = 0;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = requestPath(req.url);
    if (path === undefined) {
      return sendRefusal(
        res,
        new HttpRefusal('CERT_CSI_REQUEST_TARGET_MALFORMED', 'malformed request target'),
      );
    }
    if (path === '/livez' || path === '/readyz') return this.probe(path, req, res);
    const endpoint = ENDPOINTS.find((e) => path === `/${e}`);
    if (!endpoint) {
      return sendRefusal(
        res,
        new HttpRefusal('CERT_CSI_ENDPOINT_NOT_FOUND', `no such endpoint: ${shortened(path)}`),
      );
    }
    const held: HeldBytes = { bytes: 0 };
    try {
      await this.review(endpoint, req, res, held);
    } finally {
      // The body and what was parsed from it are no longer held once answered.
      this.budget.give(held.bytes);
    }
  }

  private async review(
    endpoint: Endpoint,
    req: IncomingMessage,
    res: ServerResponse,
    held: HeldBytes,
  ): Promise<void> {
    const started = performance.now();
    let request: AdmissionRequest;
    try {
      const body = readReviewBody(req, this.limits, this.budget, held);
      request = readAdmissionReview(await this.parsed(body, held));
    } catch (err) {
      const code = httpStatusOf(err);
      // Anything but a refusal is no fault of the request: thrown on, answered as a failure.
      if (!isRefusalStatus(code)) throw err;
      const message =
        err instanceof MalformedReviewError
          ? `malformed AdmissionReview: ${err.message}`
          : errorMessage(err);
      this.options.logger.warn({ endpoint, code, error: message }, 'admission review refused');
      return sendRefusal(res, err, message);
    }
    const decision = await this.decide(endpoint, request);
    sendJson(res, 200, reviewAnswer(request.uid, decision));
    this.logReview(endpoint, request, decision, performance.now() - started);
  }

  /**
   * The parsed body. A body past its allowance takes long to parse, and its review to decide:
   * one at a time, each step in a turn of its own, with I/O between. The bytes are not held
   * once parsed (no variable keeps them while the review is decided).
   */
  private async parsed(body: Promise<Buffer>, held: HeldBytes): Promise<unknown> {
    const bytes = await body;
    if (held.bytes === 0) return parseReviewBody(bytes);
    const value = await this.largeBodies.run(() => parseReviewBody(bytes));
    // Its decision (the rules over a large object) in the next turn, after pending I/O.
    await nextTurn();
    return value;
  }

  /**
   * The endpoint's decision; a handler that throws refuses the request as an internal error,
   * whose message says nothing of the cause: the log has it (its type and shortened message,
   * never the objects).
   */
  private async decide(endpoint: Endpoint, request: AdmissionRequest): Promise<AdmissionDecision> {
    try {
      return await this.options.handlers[endpoint](request);
    } catch (err) {
      const error = asError(err);
      this.options.logger.error(
        { endpoint, uid: request.uid, errorType: error.name, error: shortened(error.message) },
        'admission handler failed',
      );
      return {
        allowed: false,
        code: FAILURE_STATUS,
        reason: 'InternalError',
        message: `internal error: the webhook failed to decide review ${quoted(request.uid)}; its log has the cause`,
      };
    }
  }

  private logReview(
    endpoint: Endpoint,
    request: AdmissionRequest,
    decision: AdmissionDecision,
    latencyMs: number,
  ): void {
    const { resource, subResource } = writtenResource(request);
    const group = resource.group === '' ? '' : `.${resource.group}`;
    this.options.logger.info(
      {
        endpoint,
        uid: request.uid,
        operation: request.operation,
        resource: `${resource.resource}${group}${subResource ? `/${subResource}` : ''}`,
        ...(request.namespace ? { namespace: request.namespace } : {}),
        ...(request.name ? { name: request.name } : {}),
        user: request.userInfo.username,
        allowed: decision.allowed,
        ...(decision.allowed
          ? { patched: (decision.patch?.length ?? 0) > 0 }
          : { code: decision.code, reason: decision.reason }),
        latencyMs: Math.round(latencyMs * 10) / 10,
      },
      'admission review',
    );
  }

  private probe(path: string, req: IncomingMessage, res: ServerResponse): void {
    req.resume();
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      const refusal = new HttpRefusal('CERT_CSI_HTTP_METHOD_NOT_ALLOWED', `${path} answers GET`);
      sendRefusal(res, refusal, refusal.message, 'GET, HEAD');
      return;
    }
    const readiness =
      path === '/livez'
        ? { ready: true as const }
        : (this.options.readiness?.() ?? { ready: true as const });
    if (readiness.ready) sendText(res, 200, 'ok');
    else sendText(res, 503, `not ready: ${readiness.why}`);
  }
}

/** The AdmissionReview answering request uid with decision. */
export function reviewAnswer(uid: string, decision: AdmissionDecision): AdmissionReview {
  const response: AdmissionResponse = { uid, allowed: decision.allowed };
  if (!decision.allowed) {
    response.status = {
      status: 'Failure',
      code: decision.code,
      reason: decision.reason,
      message: cappedText(decision.message),
      metadata: {},
    };
  } else if (decision.patch && decision.patch.length > 0) {
    response.patch = Buffer.from(JSON.stringify(decision.patch)).toString('base64');
    response.patchType = 'JSONPatch';
  }
  return { apiVersion: ADMISSION_REVIEW_API_VERSION, kind: ADMISSION_REVIEW_KIND, response };
}

/**
 * Answers a refused request: the status of err's kind with message, the methods allowed
 * after a 405, a retry hint after a 503, and the connection closed when the refusal left its
 * body unread.
 */
function sendRefusal(
  res: ServerResponse,
  err: unknown,
  message = errorMessage(err),
  allow = 'POST',
): void {
  const code = httpStatusOf(err);
  if (code === 405) res.setHeader('Allow', allow);
  if (code === 503) res.setHeader('Retry-After', '1');
  if (err instanceof HttpRefusal && err.close) res.setHeader('Connection', 'close');
  sendText(res, code, message);
}

function sendText(res: ServerResponse, code: number, text: string): void {
  const body = `${text}\n`;
  res.writeHead(code, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

function sendJson(res: ServerResponse, code: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(code, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}
