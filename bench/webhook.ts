/**
 * AdmissionReviews answered per second by `cert-csi webhook`'s HTTPS server (validate and
 * mutate of a CertificateRequest create, its CSR's signature checked), against two floors
 * measured in the same run: the same rules called in process (no HTTP, no JSON), and the same
 * server answering every review "allowed" without looking at it (transport only).
 *
 *   npm run bench:webhook [-- --reviews 4000 --concurrency 8]
 */
import { randomUUID } from 'node:crypto';
import { Agent, request as httpsRequest } from 'node:https';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import {
  type AdmissionHandlers,
  AdmissionWebhookServer,
} from '../src/admission/webhook/admission-server.js';
import { certManagerAdmission } from '../src/admission/webhook/cert-manager-admission.js';
import type { AdmissionRequest } from '../src/api/admission-review.js';
import { silentLogger } from '../src/api/logger.js';
import type { KubeObject } from '../src/api/meta.js';
import { forgetParsedCsrs } from '../src/pki/csr.js';
import {
  certificateRequest,
  withCsr,
  withNamespace,
  withSpec,
} from '../test/support/builders/index.js';
import { keyAndCsr } from '../test/support/issuer-fixtures.js';
import { servingCertificate, WEBHOOK_HOST } from '../test/support/webhook-tls.js';
import { ECDSA_P256 } from './signing-stack.js';
import { recordFigures } from './support/figures.js';

const { values } = parseArgs({
  options: {
    reviews: { type: 'string', default: '4000' },
    concurrency: { type: 'string', default: '8' },
  },
});
const count = Number(values.reviews);
const concurrency = Number(values.concurrency);

// One CSR per review, made before the timing: a cluster sends each request once, and the CSR
// parse cache (src/pki/csr.ts) would otherwise serve every review after the first. Made in this
// process, they are forgotten as made here too: a cluster's CSRs come from elsewhere and have
// their signatures checked.
async function csrPool(n: number): Promise<string[]> {
  const pems = await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const { csrPem } = await keyAndCsr(ECDSA_P256, { dnsNames: [`bench-${i}.example`] });
      return csrPem;
    }),
  );
  forgetParsedCsrs();
  return pems;
}
const objectWith = (csrPem: string) =>
  certificateRequest(
    'bench',
    withNamespace('team'),
    withSpec({
      issuerRef: { name: 'ca', kind: 'Issuer', group: 'cert-manager.io' },
      usages: ['digital signature', 'key encipherment'],
    }),
    withCsr(csrPem),
  );
const user = { username: 'alice', uid: 'u-1', groups: ['developers', 'system:authenticated'] };
const resource = { group: 'cert-manager.io', version: 'v1', resource: 'certificaterequests' };
const requestOf = (uid: string, object: KubeObject & { spec: object }): AdmissionRequest => ({
  uid,
  resource,
  name: 'bench',
  namespace: 'team',
  operation: 'CREATE',
  userInfo: user,
  // As the mutating webhook leaves it: the requester recorded.
  object: {
    ...object,
    spec: { ...object.spec, username: 'alice', uid: 'u-1', groups: user.groups },
  } as KubeObject,
});
// Creates never ask the cluster: the approval authority is not consulted.
const rules = certManagerAdmission({
  signerResources: { resolve: async () => undefined },
  reviewAccess: async () => false,
});
const allowAll: AdmissionHandlers = {
  validate: async () => ({ allowed: true }),
  mutate: async () => ({ allowed: true }),
};

/** Reviews per second of the rules called in process, both endpoints per review. */
async function inProcess(n: number): Promise<number> {
  const objects = (await csrPool(n)).map(objectWith);
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    const request = requestOf(String(i), objects[i] as KubeObject & { spec: object });
    const mutated = await rules.mutate(request);
    const validated = await rules.validate(request);
    if (!mutated.allowed || !validated.allowed) throw new Error('the bench review was refused');
  }
  return (n * 1000) / (performance.now() - start);
}

/** Reviews per second through HTTPS (keep-alive, `concurrency` at once), with latency percentiles. */
async function overHttps(
  handlers: AdmissionHandlers,
  n: number,
): Promise<{ rate: number; p50: number; p95: number; p99: number }> {
  const { issued, serving } = await servingCertificate();
  const server = await AdmissionWebhookServer.start({
    handlers,
    certificate: issued,
    logger: silentLogger,
    port: 0,
    host: '127.0.0.1',
  });
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency, ca: issued.caPem });
  const post = (path: string, body: string) =>
    new Promise<void>((resolve, reject) => {
      const req = httpsRequest(
        {
          host: '127.0.0.1',
          port: server.port,
          servername: WEBHOOK_HOST,
          path,
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json' },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const answer = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
              response?: { allowed?: boolean };
            };
            if (res.statusCode === 200 && answer.response?.allowed) resolve();
            else reject(new Error(`HTTP ${res.statusCode}: the bench review was refused`));
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const objects = (await csrPool(n)).map(objectWith);
  const latencies: number[] = [];
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const object = objects[next] as KubeObject & { spec: object };
        next++;
        const uid = randomUUID();
        const body = JSON.stringify({
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          request: requestOf(uid, object),
        });
        const began = performance.now();
        await post('/mutate', body);
        await post('/validate', body);
        latencies.push(performance.now() - began);
      }
    }),
  );
  const rate = (n * 1000) / (performance.now() - start);
  agent.destroy();
  await server.close();
  // Its renewal timer would keep the process alive after the figures are printed.
  serving.stop();
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return { rate, p50: at(0.5), p95: at(0.95), p99: at(0.99) };
}

console.log(
  `bench/webhook: ${count} CertificateRequest creates (mutate + validate each), ${concurrency} at once, node ${process.version}`,
);
await inProcess(200); // warm-up
const floorRules = await inProcess(count);
await overHttps(allowAll, 200); // warm-up
const transport = await overHttps(allowAll, count);
const served = await overHttps(rules, count);
const f = (x: number) => x.toFixed(0);
const ms = (x: number) => x.toFixed(2);
console.log('                         | reviews/s | p50 ms | p99 ms');
console.log(`rules in process (floor) | ${f(floorRules).padStart(9)} |      - |      -`);
console.log(
  `HTTPS, allow-all (floor) | ${f(transport.rate).padStart(9)} | ${ms(transport.p50).padStart(6)} | ${ms(transport.p99).padStart(6)}`,
);
console.log(
  `HTTPS, cert-manager rules| ${f(served.rate).padStart(9)} | ${ms(served.p50).padStart(6)} | ${ms(served.p99).padStart(6)}`,
);
console.log(
  `ratio to the transport floor ${(served.rate / transport.rate).toFixed(2)}; rules' share of a review ${((1 / floorRules / (1 / served.rate)) * 100).toFixed(0)} %`,
);
recordFigures('webhook', [
  {
    name: 'CertificateRequest reviews over HTTPS (mutate + validate)',
    value: served.rate,
    unit: '/s',
    p50: served.p50,
    p95: served.p95,
    ownFloor: { value: transport.rate, what: 'HTTPS allow-all' },
  },
]);
