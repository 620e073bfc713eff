/**
 * Kubernetes CertificateSigningRequests signed per second by the CSR signer
 * (`certificatesigningrequests-issuer-ca`) through the store, against the raw src/pki signing
 * cost measured in the same run (the floor, as bench/sign.ts measures it). Each CSR is created
 * and approved (a status write appending Approved, as embedded mode approves) one after
 * another; the store admits every write with embedded mode's rules unless `--admission none`.
 *
 *   npm run bench:csr [-- --requests 500 --workers 4 --admission embedded|none]
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { encodeBytes } from '../src/api/certificate-request.js';
import {
  type CertificateSigningRequest,
  CertificateSigningRequestKind,
  type CsrCondition,
} from '../src/api/certificate-signing-request.js';
import { CLUSTER_ISSUERS_SIGNER_DOMAIN } from '../src/api/issuer-signer-name.js';
import { embeddedAdmission } from '../src/cli/node/embedded-admission.js';
import { issuerControllers } from '../src/issuer/controllers.js';
import { issuerStackConfig } from '../src/issuer/stack-config.js';
import { forgetParsedCsrs } from '../src/pki/csr.js';
import { MemoryStore } from '../src/store/memory-store.js';
import {
  BENCH_ISSUER,
  csrs,
  ECDSA_P256,
  signingFloor,
  startSigningStack,
  usageMeter,
} from './signing-stack.js';
import { recordFigures } from './support/figures.js';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '500' },
    workers: { type: 'string', default: '4' },
    warmup: { type: 'string', default: '50' },
    admission: { type: 'string', default: 'embedded' },
  },
});
const count = Number(values.requests);
const workers = Number(values.workers);
const warmup = Number(values.warmup);
if (values.admission !== 'embedded' && values.admission !== 'none') {
  throw new Error('--admission: embedded or none');
}
const admitted = values.admission === 'embedded';
const SIGNER_NAME = `${CLUSTER_ISSUERS_SIGNER_DOMAIN}/${BENCH_ISSUER}`;

/** A CSR object for the bench's ClusterIssuer over csrPem, for a server certificate. */
function csrObject(name: string, csrPem: string): CertificateSigningRequest {
  return {
    apiVersion: 'certificates.k8s.io/v1',
    kind: CertificateSigningRequestKind.kind,
    metadata: { name },
    spec: {
      request: encodeBytes(csrPem),
      signerName: SIGNER_NAME,
      usages: ['digital signature', 'key encipherment', 'server auth'],
      expirationSeconds: 24 * 3600,
      username: 'bench',
    },
  };
}

/** Appends Approved, as `kubectl certificate approve` (or embedded mode's user) does. */
function approved(csr: CertificateSigningRequest): CertificateSigningRequest {
  const time = `${new Date().toISOString().slice(0, 19)}Z`;
  const condition: CsrCondition = {
    type: 'Approved',
    status: 'True',
    reason: 'ApprovedByBench',
    message: 'approved by bench/csr-signing.ts',
    lastUpdateTime: time,
    lastTransitionTime: time,
  };
  return {
    ...csr,
    status: { ...csr.status, conditions: [...(csr.status?.conditions ?? []), condition] },
  };
}

/**
 * The CSRs created and approved in a fresh store with the issuer controllers running (`width`
 * signing workers); the rate from the first create until every CSR holds its certificate,
 * counted through a watch, and the CPU per CSR.
 */
async function signThroughStore(
  requests: readonly string[],
  width: number,
): Promise<{ rate: number; cpuMs: number }> {
  const store = new MemoryStore(admitted ? { admit: embeddedAdmission } : {});
  const stack = await startSigningStack({
    store,
    controllers: issuerControllers,
    config: issuerStackConfig({ signingWorkers: width }),
    caSpec: ECDSA_P256,
  });
  const listed = await store.list(CertificateSigningRequestKind);
  const signed = new Set<string>();
  const allSigned = new Promise<void>((resolve, reject) => {
    const watch = store.watch<CertificateSigningRequest>(
      CertificateSigningRequestKind,
      { resourceVersion: listed.resourceVersion },
      {
        onEvent: ({ object }) => {
          const failed = object.status?.conditions?.find((c) => c.type === 'Failed');
          if (failed) reject(new Error(`${object.metadata.name}: ${failed.message}`));
          if (!object.status?.certificate) return;
          signed.add(object.metadata.name);
          if (signed.size === requests.length) {
            watch.stop();
            resolve();
          }
        },
        onError: reject,
      },
    );
  });
  // The floor parsed these CSRs: the stack must not find them held.
  forgetParsedCsrs();
  const meter = usageMeter();
  const start = performance.now();
  for (const [i, csrPem] of requests.entries()) {
    const created = await store.create(
      CertificateSigningRequestKind,
      csrObject(`csr-${i}`, csrPem),
    );
    await store.updateStatus(CertificateSigningRequestKind, approved(created));
  }
  await allSigned;
  const rate = (requests.length / (performance.now() - start)) * 1000;
  const { cpuMs } = meter();
  await stack.stop();
  await store.close();
  return { rate, cpuMs: cpuMs / requests.length };
}

const requests = await csrs(count);
console.log(
  `bench/csr-signing: ${count} ECDSA P-256 CSRs, ECDSA P-256 CA, ${workers} signing workers, admission ${values.admission}, node ${process.version}`,
);
// Warm-up: every path once, small, so the measured figures are not the JIT's.
await signingFloor(ECDSA_P256, requests.slice(0, warmup), 1);
await signThroughStore(requests.slice(0, warmup), workers);
const floorN = await signingFloor(ECDSA_P256, requests, workers);
const stack = await signThroughStore(requests, workers);
console.log('floor N workers | via store+controllers | CPU each | ratio to floor N');
console.log(
  `${floorN.toFixed(0).padStart(12)} /s | ${stack.rate.toFixed(0).padStart(17)} /s   | ${stack.cpuMs.toFixed(2)} ms | ${(stack.rate / floorN).toFixed(2)}`,
);
recordFigures('csr', [
  {
    name: `CSRs signed via store+controllers, ECDSA P-256 CA${admitted ? ', embedded admission' : ''}`,
    value: stack.rate,
    unit: '/s',
    rawFloor: { of: 'signing', key: 'ecdsa-p256' },
  },
]);
