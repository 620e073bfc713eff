import { once } from 'node:events';
import { type Agent, request } from 'node:https';
import { connect, type PeerCertificate, type TLSSocket } from 'node:tls';
import {
  type IssuedServingCertificate,
  ServingCertificate,
  type ServingCertificateOptions,
  serviceDnsNames,
} from '../../src/admission/webhook/serving-certificate.js';
import { WebhookCa } from '../../src/admission/webhook/webhook-ca.js';
import { silentLogger } from '../../src/api/logger.js';
import type { Clock } from '../../src/base/clock.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import type { ResourceStore } from '../../src/store/resource-store.js';

export const WEBHOOK_NAMESPACE = 'cert-csi';
export const WEBHOOK_SERVICE = 'cert-csi-webhook';
/** The name the API server verifies the serving certificate against. */
export const WEBHOOK_HOST = `${WEBHOOK_SERVICE}.${WEBHOOK_NAMESPACE}.svc`;

/** A webhook CA in store (a new MemoryStore by default) and a serving certificate it signed. */
export async function servingCertificate(
  options: {
    store?: ResourceStore;
    clock?: Clock;
    install?: ServingCertificateOptions['install'];
  } = {},
): Promise<{ ca: WebhookCa; serving: ServingCertificate; issued: IssuedServingCertificate }> {
  const ca = new WebhookCa({
    store: options.store ?? new MemoryStore(),
    namespace: WEBHOOK_NAMESPACE,
    secretName: 'cert-csi-webhook-ca',
    logger: silentLogger,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const serving = new ServingCertificate({
    authority: ca,
    dnsNames: serviceDnsNames(WEBHOOK_SERVICE, WEBHOOK_NAMESPACE),
    install: options.install ?? (() => {}),
    logger: silentLogger,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const issued = await serving.start();
  return { ca, serving, issued };
}

/** An HTTPS answer: status, headers and body text. */
export interface HttpsAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * An HTTPS request to 127.0.0.1:port that verifies the server as the API server does: the
 * chain against caPem, the name against WEBHOOK_HOST (SNI and hostname).
 */
export function httpsRequest(
  port: number,
  caPem: string,
  options: {
    method?: string;
    path: string;
    body?: string | Buffer;
    headers?: Record<string, string>;
    /** Called once the whole request was handed to the connection. */
    sent?: () => void;
    /** Connections kept alive for reuse, as an API server keeps them (default: a new one). */
    agent?: Agent;
  },
): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: options.method ?? 'POST',
        path: options.path,
        ca: caPem,
        servername: WEBHOOK_HOST,
        checkServerIdentity: (_host, cert) => checkName(cert),
        agent: options.agent ?? false,
        headers: {
          ...(options.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
          ...options.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (options.sent) req.once('finish', options.sent);
    req.end(options.body);
  });
}

function checkName(cert: PeerCertificate): Error | undefined {
  const names = (cert.subjectaltname ?? '').split(', ').map((n) => n.replace(/^DNS:/, ''));
  return names.includes(WEBHOOK_HOST)
    ? undefined
    : new Error(`certificate is not for ${WEBHOOK_HOST}: ${cert.subjectaltname}`);
}

/** The certificate a new TLS connection to 127.0.0.1:port is served (no verification), as DER. */
export function servedCertificate(port: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect(
      { host: '127.0.0.1', port, servername: WEBHOOK_HOST, rejectUnauthorized: false },
      () => {
        const der = socket.getPeerCertificate().raw;
        socket.end();
        resolve(der);
      },
    );
    socket.on('error', reject);
  });
}

/**
 * A TLS connection to 127.0.0.1:port that verifies nothing (an attacker's), once established.
 * A write to it after the server cut it is no error: only the cut matters to a test.
 */
export async function attackerConnection(port: number): Promise<TLSSocket> {
  const socket = connect({
    host: '127.0.0.1',
    port,
    servername: WEBHOOK_HOST,
    rejectUnauthorized: false,
  });
  socket.on('error', () => {});
  await once(socket, 'secureConnect');
  return socket;
}

/** The head of a POST to path with a JSON body sent in chunks (no Content-Length). */
export function chunkedPostHead(path: string): string {
  return `POST ${path} HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
}

/** One chunk of a chunked body. */
export function bodyChunk(data: string | Buffer): Buffer {
  const bytes = Buffer.from(data);
  return Buffer.concat([
    Buffer.from(`${bytes.length.toString(16)}\r\n`),
    bytes,
    Buffer.from('\r\n'),
  ]);
}
