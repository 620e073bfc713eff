import type { IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { PeerCertificate } from 'node:tls';
import { shortened } from '../../src/api/echoed-value.js';
import type { WebhookClientConfig } from '../../src/api/webhook-configuration.js';
import { systemClock } from '../../src/base/clock.js';
import { Deadline } from '../../src/base/deadline.js';
import { goQuote } from '../../src/base/go-text.js';
import { decodePemBlocks } from '../../src/pki/pem.js';
import { DEFAULT_SERVICE_PORT } from './webhook-configurations.js';

// kube-apiserver's HTTPS client for admission webhooks (k8s.io/apiserver pkg/util/webhook
// client.go and the REST client under it): where a clientConfig points, TLS verified against
// its caBundle with the Service's DNS name, a POST bounded by the webhook's timeout, and Go's
// wording for what goes wrong, so a refused write reads as it would on a cluster.

/** Where a Service's port is served from, as the cluster's service routing would resolve it. */
export interface ServiceEndpoint {
  host: string;
  port: number;
}

/** Resolves a Service port to an endpoint; undefined when the cluster has no such Service. */
export type ServiceResolver = (
  namespace: string,
  name: string,
  port: number,
) => ServiceEndpoint | { error: string };

/** A webhook call that did not yield an answer; reason is upstream's ErrCallingWebhook reason. */
export class WebhookCallError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'WebhookCallError';
  }
}

/** Where one call goes: the URL kube-apiserver would name, and where it really connects. */
export interface WebhookTarget {
  /** The URL as the API server names it in errors, `?timeout=<n>s` included. */
  url: string;
  host: string;
  port: number;
  path: string;
  /** The TLS server name (SNI and the name verified); undefined for an IP address. */
  serverName: string | undefined;
  /** The Host header. */
  hostHeader: string;
  /** The PEM CAs to trust; the system roots when undefined. */
  ca: string | undefined;
  /** Set when the address cannot be resolved: the call fails at dial with this cause. */
  unresolved: string | undefined;
}

/** What came back: the HTTP status, its content type and body. */
export interface WebhookReply {
  statusCode: number;
  contentType: string;
  body: string;
}

// OpenSSL's verification failures that Go reports as an unknown authority.
const UNKNOWN_AUTHORITY = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_SIGNATURE_FAILURE',
]);
const EXPIRED = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID']);

/** The caBundle as PEM, refused with rest.TLSConfigFor's words when it holds no certificate. */
function trustedCas(config: WebhookClientConfig): string | undefined {
  if (config.caBundle === undefined || config.caBundle === '') return undefined;
  const pem = Buffer.from(config.caBundle, 'base64').toString('utf8');
  let labels: string[];
  try {
    labels = decodePemBlocks(pem).map((block) => block.label);
  } catch {
    labels = [];
  }
  if (labels.length === 0) {
    throw new WebhookCallError(
      'could not get REST client: unable to load root certificates: unable to parse bytes as PEM block',
    );
  }
  if (!labels.includes('CERTIFICATE')) {
    throw new WebhookCallError(
      'could not get REST client: unable to load root certificates: no valid certificate authority data seen',
    );
  }
  return pem;
}

/**
 * The target of a clientConfig for a call bounded by timeoutSeconds: a Service is addressed
 * as `https://<name>.<namespace>.svc:<port><path>` and verified under that name, whatever
 * endpoint it resolves to; a URL is used as written.
 */
export function webhookTarget(
  config: WebhookClientConfig,
  timeoutSeconds: number,
  resolve: ServiceResolver,
): WebhookTarget {
  const ca = trustedCas(config);
  const query = `?timeout=${timeoutSeconds}s`;
  const service = config.service;
  if (service) {
    const serverName = `${service.name}.${service.namespace}.svc`;
    const port = service.port ?? DEFAULT_SERVICE_PORT;
    const path = service.path || '/';
    const resolved = resolve(service.namespace, service.name, port);
    return {
      url: `https://${serverName}:${port}${path}${query}`,
      host: 'error' in resolved ? serverName : resolved.host,
      port: 'error' in resolved ? port : resolved.port,
      path: `${path}${query}`,
      serverName,
      hostHeader: `${serverName}:${port}`,
      ca,
      unresolved: 'error' in resolved ? resolved.error : undefined,
    };
  }
  // Validation let only an https URL with a host and no query or fragment through.
  const url = new URL(config.url as string);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return {
    url: `${url.origin}${url.pathname}${query}`,
    host,
    port: url.port === '' ? 443 : Number(url.port),
    path: `${url.pathname}${query}`,
    serverName: isIP(host) === 0 ? host : undefined,
    hostHeader: url.host,
    ca,
    unresolved: undefined,
  };
}

/** Go's x509.HostnameError text for a certificate that does not name the host. */
function hostnameMismatch(host: string, cert: PeerCertificate | undefined): string {
  const names = (cert?.subjectaltname ?? '').split(', ').filter((entry) => entry !== '');
  if (isIP(host) !== 0) {
    const ips = names.filter((n) => n.startsWith('IP Address:')).map((n) => n.slice(11));
    if (ips.length === 0) {
      return `x509: cannot validate certificate for ${host} because it doesn't contain any IP SANs`;
    }
    return `x509: certificate is valid for ${ips.join(', ')}, not ${host}`;
  }
  const dns = names.filter((n) => n.startsWith('DNS:')).map((n) => n.slice(4));
  if (dns.length === 0)
    return `x509: certificate is not valid for any names, but wanted to match ${host}`;
  return `x509: certificate is valid for ${dns.join(', ')}, not ${host}`;
}

/** What Go's HTTP client would say about a failed exchange (the part after `Post "<url>": `). */
function transportCause(err: unknown, target: WebhookTarget, deadline: Deadline): string {
  if (deadline.exceeded) return 'context deadline exceeded';
  const failure = err as NodeJS.ErrnoException & { cert?: PeerCertificate };
  const code = failure.code ?? '';
  if (code === 'ECONNREFUSED') {
    return `dial tcp ${target.host}:${target.port}: connect: connection refused`;
  }
  if (UNKNOWN_AUTHORITY.has(code)) {
    return 'tls: failed to verify certificate: x509: certificate signed by unknown authority';
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return `tls: failed to verify certificate: ${hostnameMismatch(target.serverName ?? target.host, failure.cert)}`;
  }
  if (EXPIRED.has(code)) {
    return 'tls: failed to verify certificate: x509: certificate has expired or is not yet valid';
  }
  // The peer closed the connection without an answer: Go reads EOF.
  if (code === 'ECONNRESET' && failure.message === 'socket hang up') return 'EOF';
  return failure.message;
}

function readBody(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}

/**
 * POSTs body to target and returns the reply, or throws a WebhookCallError whose reason is
 * `failed to call webhook: Post "<url>": <cause>`. The whole exchange, body included, is
 * bounded by a Deadline: its timer fires whatever the garbage collector does.
 */
export async function postToWebhook(
  target: WebhookTarget,
  body: string,
  timeoutMs: number,
): Promise<WebhookReply> {
  const deadline = new Deadline(systemClock, timeoutMs);
  const failed = (err: unknown) =>
    new WebhookCallError(
      `failed to call webhook: Post ${goQuote(target.url)}: ${transportCause(err, target, deadline)}`,
    );
  try {
    if (target.unresolved !== undefined) throw new Error(target.unresolved);
    return await new Promise<WebhookReply>((resolve, reject) => {
      const req = httpsRequest(
        {
          host: target.host,
          port: target.port,
          path: target.path,
          method: 'POST',
          ...(target.serverName !== undefined && { servername: target.serverName }),
          ...(target.ca !== undefined && { ca: target.ca }),
          // One connection per call, closed after it: nothing lingers once a test ends.
          agent: false,
          signal: deadline.signal,
          headers: {
            Host: target.hostHeader,
            'Content-Type': 'application/json',
            Accept: 'application/json, */*',
            'Content-Length': Buffer.byteLength(body),
          },
        },
        (res) => {
          readBody(res).then(
            (text) =>
              resolve({
                statusCode: res.statusCode ?? 0,
                contentType: String(res.headers['content-type'] ?? ''),
                body: text,
              }),
            reject,
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  } catch (err) {
    throw failed(err);
  } finally {
    deadline.clear();
  }
}

// The REST client caps what it quotes of an unstructured error body.
const MAX_UNSTRUCTURED_BYTES = 2048;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The REST client's error for a reply outside 2xx: a Failure Status in the body speaks for
 * itself; anything else gets apierrors.NewGenericServerResponse's words for the code.
 */
function unexpectedStatusMessage(reply: WebhookReply): string {
  try {
    const parsed: unknown = JSON.parse(reply.body);
    if (isRecord(parsed) && parsed.kind === 'Status' && parsed.status === 'Failure') {
      return String(parsed.message ?? '');
    }
  } catch {
    // Not JSON: an unstructured answer.
  }
  const serverMessage = reply.contentType.startsWith('text/')
    ? reply.body.slice(0, MAX_UNSTRUCTURED_BYTES).trim()
    : 'unknown';
  switch (reply.statusCode) {
    case 400:
      return 'the server rejected our request for an unknown reason';
    case 401:
      return 'the server has asked for the client to provide credentials';
    case 403:
      return serverMessage;
    case 404:
      return 'the server could not find the requested resource';
    case 405:
      return 'the server does not allow this method on the requested resource';
    case 409:
      return 'the server reported a conflict';
    case 422:
      return 'the server rejected our request due to an error in our request';
    case 429:
      return 'the server has received too many requests and has asked us to try again later';
    case 504:
      return 'the server was unable to return a response in the time allotted, but may still be processing the request';
    default:
      if (reply.statusCode >= 500) {
        return `an error on the server (${goQuote(serverMessage)}) has prevented the request from succeeding`;
      }
      return `the server responded with the status code ${reply.statusCode} but did not return more information`;
  }
}

/**
 * The AdmissionReview a reply carries, or a WebhookCallError with the REST client's reason
 * (`failed to call webhook: ...`) for a reply that is not a 2xx JSON object with a kind.
 */
export function replyReview(reply: WebhookReply): Record<string, unknown> {
  if (reply.statusCode < 200 || reply.statusCode > 206) {
    throw new WebhookCallError(`failed to call webhook: ${unexpectedStatusMessage(reply)}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(reply.body);
  } catch (err) {
    throw new WebhookCallError(
      `failed to call webhook: couldn't get version/kind; json parse error: ${(err as Error).message}`,
    );
  }
  if (!isRecord(parsed) || typeof parsed.kind !== 'string' || parsed.kind === '') {
    throw new WebhookCallError(
      `failed to call webhook: Object 'Kind' is missing in '${shortened(reply.body)}'`,
    );
  }
  return parsed;
}
