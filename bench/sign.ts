/**
 * CertificateRequests signed per second by the CA controller through the store, against
 * the raw src/pki signing cost measured in the same run (the floor).
 *
 *   npm run bench:sign [-- --requests 500 --workers 4]
 */
import { parseArgs } from 'node:util';
import {
  type CertificateRequest,
  CertificateRequestKind,
  finalState,
} from '../src/api/certificate-request.js';
import { ClusterIssuerKind } from '../src/api/issuer.js';
import { SecretKind } from '../src/api/secret.js';
import { startControllers } from '../src/controller/controller-manager.js';
import { issuerControllers } from '../src/issuer/controllers.js';
import { issuerStackConfig } from '../src/issuer/stack-config.js';
import { signCertificate } from '../src/pki/certificate.js';
import { buildChain } from '../src/pki/chain.js';
import { createCsr, parseCsr } from '../src/pki/csr.js';
import { decodePrivateKey, generatePrivateKey, type KeySpec } from '../src/pki/keys.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { certificateRequest, issuer, makeCA, tlsSecret } from '../test/support/issuer-fixtures.js';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '500' },
    workers: { type: 'string', default: '4' },
  },
});
const count = Number(values.requests);
const workers = Number(values.workers);

async function pool<T>(items: readonly T[], width: number, fn: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const item = items[next++] as T;
        await fn(item);
      }
    }),
  );
}

async function csrs(n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
    out.push(
      await createCsr({ key, subject: { commonName: `pod-${i}` }, dnsNames: [`pod-${i}.ns.svc`] }),
    );
  }
  return out;
}

/** The floor: parse + verify the CSR, sign, build the chain; no store, no controllers. */
async function floor(caSpec: KeySpec, requests: string[], width: number): Promise<number> {
  const ca = await makeCA(caSpec);
  const signer = { certificatePem: ca.certificatePem, key: decodePrivateKey(ca.keyPem) };
  const template = { durationMs: 24 * 3600_000, isCA: false, usages: [] };
  const start = performance.now();
  await pool(requests, width, async (csrPem) => {
    const leaf = await signCertificate(await parseCsr(csrPem), template, signer);
    buildChain(leaf, [ca.certificatePem]);
  });
  return (requests.length / (performance.now() - start)) * 1000;
}

/** Requests created in the store, signed by the running stack; timed until all are Issued. */
async function throughStore(caSpec: KeySpec, requests: string[], width: number): Promise<number> {
  const store = new MemoryStore();
  const stack = await startControllers({
    store,
    controllers: issuerControllers,
    config: issuerStackConfig({ signingWorkers: width }),
  });
  const ca = await makeCA(caSpec);
  await store.create(
    SecretKind,
    tlsSecret('kube-system', 'bench-ca', { 'tls.crt': ca.certificatePem, 'tls.key': ca.keyPem }),
  );
  await store.create(
    ClusterIssuerKind,
    issuer('bench-ca', undefined, { ca: { secretName: 'bench-ca' } }),
  );
  await new Promise<void>((resolve) => {
    const watch = store.watch(
      ClusterIssuerKind,
      {},
      {
        onEvent: (e) => {
          if (JSON.stringify(e.object).includes('KeyPairVerified')) {
            watch.stop();
            resolve();
          }
        },
        onError: () => {},
      },
    );
  });
  const listed = await store.list(CertificateRequestKind);
  let done = 0;
  const allIssued = new Promise<void>((resolve, reject) => {
    const watch = store.watch<CertificateRequest>(
      CertificateRequestKind,
      { resourceVersion: listed.resourceVersion },
      {
        onEvent: (e) => {
          const state = finalState(e.object);
          if (state && state !== 'Issued') reject(new Error(`${e.object.metadata.name}: ${state}`));
          if (state === 'Issued' && ++done === requests.length) {
            watch.stop();
            resolve();
          }
        },
        onError: reject,
      },
    );
  });
  const start = performance.now();
  for (const [i, csrPem] of requests.entries()) {
    await store.create(
      CertificateRequestKind,
      certificateRequest('bench', `req-${i}`, csrPem, {
        issuerRef: { name: 'bench-ca', kind: 'ClusterIssuer' },
        duration: '24h',
      }),
    );
  }
  await allIssued;
  const rate = (requests.length / (performance.now() - start)) * 1000;
  await stack.stop();
  store.close();
  return rate;
}

const requests = await csrs(count);
console.log(
  `bench/sign: ${count} ECDSA P-256 CSRs, ${workers} signing workers, node ${process.version}`,
);
console.log(
  'CA key       | floor 1 worker | floor N workers | via store+controllers | ratio to floor N',
);
for (const [label, spec] of [
  ['ECDSA P-256', { algorithm: 'ECDSA', size: 256 }],
  ['RSA-2048', { algorithm: 'RSA', size: 2048 }],
] as Array<[string, KeySpec]>) {
  await floor(spec, requests.slice(0, 20), 1); // warm-up
  const floorOne = await floor(spec, requests, 1);
  const floorN = await floor(spec, requests, workers);
  const stack = await throughStore(spec, requests, workers);
  console.log(
    `${label.padEnd(12)} | ${floorOne.toFixed(0).padStart(10)} /s  | ${floorN.toFixed(0).padStart(11)} /s  | ${stack.toFixed(0).padStart(17)} /s   | ${(stack / floorN).toFixed(2)}`,
  );
}
