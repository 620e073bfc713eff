import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { Agent } from 'node:https';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { nodeArgsFor, scriptBeside } from './project-files.js';
import { attackerConnection, bodyChunk, httpsRequest } from './webhook-tls.js';

// The attack tests of the admission webhook run its server in a child process with a small
// heap: a server that holds what a client sends dies of it there (as the manifests' memory
// limit would kill it), and its peak resident memory is read from /proc, the kernel's count.

const SCRIPT = scriptBeside(import.meta.url, '../admission/webhook/fixtures/webhook-server.ts');

/** The webhook server running in a child process. */
export interface WebhookChild {
  port: number;
  caPem: string;
  /** Whether the child has exited (a crash, e.g. out of memory, before stop). */
  exited(): boolean;
  /** The child's peak resident set size so far, in MiB (VmHWM). */
  peakRssMiB(): Promise<number>;
  /** What the child wrote on stderr (its log), for a failing test to show. */
  log(): string;
  /** Closes its stdin (it closes the server and exits) and waits for the exit. */
  stop(): Promise<void>;
}

/** Starts the webhook server in a node limited to maxOldSpaceMiB of heap; resolves once it listens. */
export async function startWebhookChild(maxOldSpaceMiB: number): Promise<WebhookChild> {
  const child = spawn(
    process.execPath,
    [`--max-old-space-size=${maxOldSpaceMiB}`, ...nodeArgsFor(SCRIPT), SCRIPT],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let log = '';
  let exited = false;
  const exit = once(child, 'exit').then(() => {
    exited = true;
  });
  child.stderr.on('data', (chunk: Buffer) => {
    // The log of an attack is long: its end says what went wrong.
    log = (log + chunk.toString()).slice(-64 * 1024);
  });
  const ready = await new Promise<{ port: number; caPem: string }>((resolve, reject) => {
    let out = '';
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const newline = out.indexOf('\n');
      if (newline < 0) return;
      child.stdout.off('data', onData);
      resolve(JSON.parse(out.slice(0, newline)) as { port: number; caPem: string });
    };
    child.stdout.on('data', onData);
    void exit.then(() => reject(new Error(`the webhook child exited before listening:\n${log}`)));
  });
  return {
    ...ready,
    exited: () => exited,
    async peakRssMiB() {
      const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
      const kib = Number(/^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1]);
      return kib / 1024;
    },
    log: () => log,
    async stop() {
      if (!exited) {
        child.stdin.end();
        await exit;
      }
    },
  };
}

/** An AdmissionReview v1 body for request. */
export function reviewBody(request: Record<string, unknown>): string {
  return JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request });
}

/** A CREATE review of a valid Certificate, which the webhook admits. */
export const VALID_CERTIFICATE_REVIEW = reviewBody({
  uid: 'valid-review',
  resource: { group: 'cert-manager.io', version: 'v1', resource: 'certificates' },
  name: 'web',
  namespace: 'team',
  operation: 'CREATE',
  userInfo: { username: 'alice' },
  object: {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name: 'web', namespace: 'team' },
    spec: {
      secretName: 'web-tls',
      commonName: 'web.team.svc',
      dnsNames: ['web.team.svc'],
      issuerRef: { name: 'ca', kind: 'Issuer' },
    },
  },
});

/**
 * How long the webhook takes to admit VALID_CERTIFICATE_REVIEW, in ms: over a new connection
 * (TLS handshake included), or one of agent's; throws when it does not admit it.
 */
export async function validReviewLatencyMs(webhook: WebhookChild, agent?: Agent): Promise<number> {
  const started = performance.now();
  const res = await httpsRequest(webhook.port, webhook.caPem, {
    path: '/validate',
    body: VALID_CERTIFICATE_REVIEW,
    ...(agent ? { agent } : {}),
  });
  const latency = performance.now() - started;
  const allowed = res.status === 200 && JSON.parse(res.text).response?.allowed === true;
  if (!allowed) throw new Error(`the valid review was not admitted: ${res.status} ${res.text}`);
  return latency;
}

/**
 * One connection kept alive and reused, as kube-apiserver keeps its connections to a webhook;
 * open (handshake done) once resolved. Destroy it when done.
 */
export async function apiServerConnection(webhook: WebhookChild): Promise<Agent> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  await validReviewLatencyMs(webhook, agent);
  return agent;
}

/**
 * The latencies of valid reviews sent one after the other (50 ms apart) until over() holds,
 * at least one: the reviews an API server sends while an attack lasts (over agent's
 * connection, else each over a new one).
 */
export async function validReviewsWhile(
  webhook: WebhookChild,
  over: () => boolean,
  agent?: Agent,
): Promise<number[]> {
  const latencies: number[] = [];
  do {
    latencies.push(await validReviewLatencyMs(webhook, agent));
    if (!over()) await delay(50);
  } while (!over());
  return latencies;
}

/** What became of one attacking request: the status answered, if any, and when it ended. */
export interface AttackOutcome {
  status: number | undefined;
  /**
   * From the connection's opening to the server's answer, or to its close when it cut first
   * (with untilClosed: always to its close).
   */
  endedAfterMs: number;
}

/** An attacking request under way: `sent` once it wrote all it will, `outcome` once cut. */
export interface Attack {
  sent: Promise<void>;
  outcome: Promise<AttackOutcome>;
}

const SLICE = 64 * 1024;

/**
 * Opens a TLS connection to port (trusting nothing), writes head and then body as fast as the
 * server reads it, in 64 KiB slices (each framed as a chunk when chunked), but for its last
 * holdBack bytes, which it never sends: a slow-body client. The outcome waits for the
 * server's answer (then the client hangs up) or for the server to close the connection;
 * untilClosed: always for the server to close it.
 */
export function attack(
  port: number,
  head: string,
  body: Buffer,
  options: { holdBack: number; chunked: boolean; untilClosed?: boolean },
): Attack {
  const opened = performance.now();
  let markSent: () => void = () => {};
  const sent = new Promise<void>((resolve) => {
    markSent = resolve;
  });
  const outcome = (async (): Promise<AttackOutcome> => {
    let socket: Awaited<ReturnType<typeof attackerConnection>>;
    try {
      socket = await attackerConnection(port);
    } catch {
      markSent();
      return { status: undefined, endedAfterMs: performance.now() - opened };
    }
    let answer = '';
    let answeredAt: number | undefined;
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1').slice(0, 64);
      if (options.untilClosed) return;
      answeredAt ??= performance.now();
      socket.destroy();
    });
    // Not events.once: it rejects on the socket's errors (EPIPE once cut), which are expected.
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    void closed.then(markSent);
    socket.write(head);
    const end = body.length - options.holdBack;
    for (let at = 0; at < end && !socket.destroyed; at += SLICE) {
      const slice = body.subarray(at, Math.min(end, at + SLICE));
      const written = socket.write(options.chunked ? bodyChunk(slice) : slice);
      if (!written) {
        await Promise.race([new Promise((resolve) => socket.once('drain', resolve)), closed]);
      }
    }
    markSent();
    await closed;
    const status = /^HTTP\/1\.1 (\d{3}) /.exec(answer)?.[1];
    return {
      status: status === undefined ? undefined : Number(status),
      endedAfterMs: (answeredAt ?? performance.now()) - opened,
    };
  })();
  return { sent, outcome };
}

/** The head of a POST to /validate with a JSON body of contentLength bytes. */
export function postHead(contentLength: number): string {
  return `POST /validate HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\nContent-Length: ${contentLength}\r\n\r\n`;
}
