import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
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
import type { Logger } from '../../api/logger.js';
import { errorMessage } from '../../base/error-message.js';
import { requestPath } from '../../base/request-path.js';

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
}

/** Larger bodies are refused: an object and its old version, each at most etcd's 1.5 MiB. */
export const MAX_REVIEW_BYTES = 4 * 1024 * 1024;
const DEFAULT_DRAIN_MS = 5_000;
const ENDPOINTS = ['validate', 'mutate'] as const;
type Endpoint = (typeof ENDPOINTS)[number];

/** An HTTP error answered before any review is read (bad method, type, size or JSON). */
class HttpRefusal extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The admission webhook's HTTPS server: POST /validate and /mutate take an AdmissionReview v1
 * and answer it with the same uid; GET /livez and /readyz are its probes. A body that is not a
 * usable review gets HTTP 400 with a message saying what is wrong. Each review is logged on
 * one line (uid, operation, resource, object name, user, outcome, latency), never its objects.
 * The serving certificate is replaced in place (setCertificate): the listener never restarts.
 */
export class AdmissionWebhookServer {
  private readonly inFlight = new Set<Promise<void>>();

  private constructor(
    private readonly server: Server,
    private readonly options: AdmissionServerOptions,
  ) {}

  /** Starts listening; resolves once the port is bound. */
  static async start(options: AdmissionServerOptions): Promise<AdmissionWebhookServer> {
    const server = createServer({
      key: options.certificate.keyPem,
      cert: options.certificate.certificatePem,
      minVersion: 'TLSv1.2',
    });
    const webhook = new AdmissionWebhookServer(server, options);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const handled = webhook.handle(req, res);
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

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = requestPath(req.url);
    if (path === undefined) return sendText(res, 400, 'malformed request target');
    if (path === '/livez' || path === '/readyz') return this.probe(path, req, res);
    const endpoint = ENDPOINTS.find((e) => path === `/${e}`);
    if (!endpoint) return sendText(res, 404, `no such endpoint: ${path}`);
    const started = performance.now();
    let request: AdmissionRequest;
    try {
      request = readAdmissionReview(await readJsonBody(req));
    } catch (err) {
      const code = err instanceof HttpRefusal ? err.code : 400;
      const message =
        err instanceof MalformedReviewError
          ? `malformed AdmissionReview: ${err.message}`
          : errorMessage(err);
      if (code === 405) res.setHeader('Allow', 'POST');
      if (code === 413) res.setHeader('Connection', 'close');
      this.options.logger.warn({ endpoint, code, error: message }, 'admission review refused');
      return sendText(res, code, message);
    }
    const decision = await this.decide(endpoint, request);
    sendJson(res, 200, reviewAnswer(request.uid, decision));
    this.logReview(endpoint, request, decision, performance.now() - started);
  }

  /** The endpoint's decision; a handler that throws refuses the request as an internal error. */
  private async decide(endpoint: Endpoint, request: AdmissionRequest): Promise<AdmissionDecision> {
    try {
      return await this.options.handlers[endpoint](request);
    } catch (err) {
      this.options.logger.error(
        { endpoint, uid: request.uid, error: errorMessage(err) },
        'admission handler failed',
      );
      return {
        allowed: false,
        code: 500,
        reason: 'InternalError',
        message: `internal error: ${errorMessage(err)}`,
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
      res.setHeader('Allow', 'GET, HEAD');
      sendText(res, 405, `${path} answers GET`);
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
      message: decision.message,
      metadata: {},
    };
  } else if (decision.patch && decision.patch.length > 0) {
    response.patch = Buffer.from(JSON.stringify(decision.patch)).toString('base64');
    response.patchType = 'JSONPatch';
  }
  return { apiVersion: ADMISSION_REVIEW_API_VERSION, kind: ADMISSION_REVIEW_KIND, response };
}

/** The body of a POST with a JSON content type, at most MAX_REVIEW_BYTES, parsed. */
async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  if (req.method !== 'POST') {
    req.resume();
    throw new HttpRefusal(405, `${req.method} is not allowed: POST an AdmissionReview`);
  }
  const type = String(req.headers['content-type'] ?? '')
    .replace(/;.*$/, '')
    .trim()
    .toLowerCase();
  if (type !== 'application/json') {
    req.resume();
    throw new HttpRefusal(
      415,
      `content type ${JSON.stringify(type)} is not supported: send application/json`,
    );
  }
  const text = await readBody(req);
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new MalformedReviewError(`the body is not JSON (${errorMessage(err)})`);
  }
}

/**
 * The request body as text; past MAX_REVIEW_BYTES it stops reading and refuses (413), and
 * the answer closes the connection rather than read the rest.
 */
function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_REVIEW_BYTES) {
        chunks.push(chunk);
        return;
      }
      req.off('data', onData);
      req.pause();
      reject(new HttpRefusal(413, `the review is larger than ${MAX_REVIEW_BYTES} bytes`));
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
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
