/**
 * PodCertificateRequests issued per second by the pod certificate signer through the store,
 * against the raw cost of the same signatures measured in the same run (the floor): each
 * request's proof of possession verified and its certificate signed by the CA signer.
 *
 *   npm run bench:pod-certificates [-- --requests 300 --workers 4]
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { CLUSTER_ISSUERS_SIGNER_DOMAIN } from '../src/api/issuer-signer-name.js';
import { NamespaceKind } from '../src/api/namespace.js';
import {
  type PodCertificateRequest,
  PodCertificateRequestKind,
  terminalConditionOf,
} from '../src/api/pod-certificate-request.js';
import { createCASigner } from '../src/issuer/ca-issuer.js';
import { issuerControllers } from '../src/issuer/controllers.js';
import { POD_CERTIFICATE_NAMESPACES_ANNOTATION } from '../src/issuer/podcertificaterequests/pod-certificate-policy.js';
import {
  podSigningRequest,
  spiffeIdOf,
} from '../src/issuer/podcertificaterequests/pod-certificate-profile.js';
import { podCertificateWindow } from '../src/issuer/podcertificaterequests/pod-certificate-times.js';
import { issuerStackConfig } from '../src/issuer/stack-config.js';
import { forgetParsedCsrs } from '../src/pki/csr.js';
import {
  type PodCertificateKeyType,
  verifiedPodCertificateKey,
} from '../src/pki/pod-certificate-key.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { clusterIssuer, tlsSecret, withSpec } from '../test/support/builders/index.js';
import { makeCA } from '../test/support/issuer-fixtures.js';
import {
  createPod,
  type KeyMaterialForm,
  kubeletRequest,
  namespaceObject,
  newKubeletKey,
  podIdentity,
} from '../test/support/pod-certificates.js';
import {
  BENCH_ISSUER,
  ECDSA_P256,
  pool,
  startSigningStack,
  type Usage,
  usageMeter,
} from './signing-stack.js';
import { type Figure, recordFigures } from './support/figures.js';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '300' },
    workers: { type: 'string', default: '4' },
    warmup: { type: 'string', default: '50' },
  },
});
const count = Number(values.requests);
const workers = Number(values.workers);
const warmup = Number(values.warmup);
// The CA behind the ClusterIssuer, the same for every run: only the pods' keys change.
const CA_SPEC = ECDSA_P256;
const NAMESPACE = 'bench';
const SIGNER_NAME = `${CLUSTER_ISSUERS_SIGNER_DOMAIN}/${BENCH_ISSUER}`;
// What the signer controller is configured with (trust domain, longest certificate).
const CONFIG = issuerStackConfig({ signingWorkers: workers });

interface Rate {
  rate: number;
  usage: Usage;
}

/**
 * A store holding the bench namespace and n scheduled pods, and a request for each pod built
 * exactly as kubelet builds it (a fresh key per request, the key in form); none created yet.
 */
async function podsAndRequests(
  keyType: PodCertificateKeyType,
  form: KeyMaterialForm,
  n: number,
): Promise<{ store: MemoryStore; requests: PodCertificateRequest[] }> {
  const store = new MemoryStore();
  await store.create(NamespaceKind, namespaceObject(NAMESPACE));
  const requests: PodCertificateRequest[] = [];
  for (let i = 0; i < n; i++) {
    const pod = await createPod(store, podIdentity(NAMESPACE, `pod-${i}`));
    const key = await newKubeletKey(keyType);
    requests.push((await kubeletRequest(pod, SIGNER_NAME, keyType, form, { key })).request);
  }
  return { store, requests };
}

/**
 * The floor: what the signer cannot avoid for each request, width at a time: the proof of
 * possession verified (verifiedPodCertificateKey) and the CA signer (createCASigner, its CA
 * Secret prepared once as in the controller) on the request's SigningRequest
 * (podSigningRequest). No store, no controllers, no status.
 */
async function signingFloor(requests: PodCertificateRequest[], width: number): Promise<Rate> {
  const ca = await makeCA(CA_SPEC);
  const secret = tlsSecret('kube-system', BENCH_ISSUER, {
    'tls.crt': ca.certificatePem,
    'tls.key': ca.keyPem,
  });
  // The CA signer prepares a Secret once per uid/resourceVersion, as a store would set them.
  secret.metadata.uid = 'bench-ca-secret';
  secret.metadata.resourceVersion = '1';
  const caIssuer = clusterIssuer(BENCH_ISSUER, withSpec({ ca: { secretName: BENCH_ISSUER } }));
  const signer = createCASigner();
  const sign = async (request: PodCertificateRequest) => {
    const { spec } = request;
    const { publicKey, spkiDer } = verifiedPodCertificateKey(spec, spec.podUID);
    const window = podCertificateWindow(
      new Date(),
      spec.maxExpirationSeconds,
      CONFIG.podCertificateMaxDurationMs,
    );
    const spiffeId = spiffeIdOf(CONFIG.trustDomain, NAMESPACE, spec.serviceAccountName);
    const signed = await signer(
      caIssuer,
      {
        read: async () =>
          podSigningRequest({ publicKey, spkiDer, spiffeId, durationMs: window.durationMs }),
      },
      {
        secret: () => secret,
        resourceNamespace: () => CONFIG.clusterResourceNamespace,
        now: window.notBefore,
      },
    );
    if (signed.kind !== 'issued') throw new Error(`floor: ${signed.kind}`);
  };
  // The CA Secret parsed and its key imported before timing, as the controller keeps it.
  const first = requests[0];
  if (first) await sign(first);
  // Every measure reads each stub request for the first time, as a live signer would.
  forgetParsedCsrs();
  const meter = usageMeter();
  const start = performance.now();
  await pool(requests, width, sign);
  return { rate: (requests.length / (performance.now() - start)) * 1000, usage: meter() };
}

/**
 * The requests created in store one after another with the issuer controllers running
 * (`width` signing workers) and the ClusterIssuer `bench-ca` serving every namespace; the rate
 * from the first create until every request is Issued, counted through a watch. Closes store.
 */
async function issueThroughStore(
  store: MemoryStore,
  requests: PodCertificateRequest[],
  width: number,
): Promise<Rate> {
  const stack = await startSigningStack({
    store,
    controllers: issuerControllers,
    config: issuerStackConfig({ signingWorkers: width }),
    caSpec: CA_SPEC,
    issuerAnnotations: { [POD_CERTIFICATE_NAMESPACES_ANNOTATION]: '' },
  });
  const listed = await store.list(PodCertificateRequestKind);
  const issued = new Set<string>();
  const allIssued = new Promise<void>((resolve, reject) => {
    const watch = store.watch<PodCertificateRequest>(
      PodCertificateRequestKind,
      { resourceVersion: listed.resourceVersion },
      {
        onEvent: ({ object }) => {
          const condition = terminalConditionOf(object);
          if (!condition) return;
          if (condition.type !== 'Issued') {
            reject(new Error(`${object.metadata.name}: ${condition.type} ${condition.message}`));
          }
          issued.add(object.metadata.name);
          if (issued.size === requests.length) {
            watch.stop();
            resolve();
          }
        },
        onError: reject,
      },
    );
  });
  forgetParsedCsrs();
  const meter = usageMeter();
  const start = performance.now();
  for (const request of requests) await store.create(PodCertificateRequestKind, request);
  await allIssued;
  const result = { rate: (requests.length / (performance.now() - start)) * 1000, usage: meter() };
  await stack.stop();
  await store.close();
  return result;
}

/** Two measures of the same n requests as one: total requests over total time and CPU. */
function combined(a: Rate, b: Rate): Rate {
  const msEach = (1000 / a.rate + 1000 / b.rate) / 2;
  return {
    rate: 1000 / msEach,
    usage: { cpuMs: (a.usage.cpuMs + b.usage.cpuMs) / 2, elu: (a.usage.elu + b.usage.elu) / 2 },
  };
}

/**
 * On the same n requests: the floor one at a time, the floor width at a time, the store path,
 * and the floor width at a time again: the ratios use both N-wide floors, so a neighbour's
 * load that changes during the run weighs on the floor and the store path alike. (CPU per
 * request, the other ratio, depends less on the neighbours than the rates do.)
 */
async function measure(keyType: PodCertificateKeyType, form: KeyMaterialForm, n: number) {
  const { store, requests } = await podsAndRequests(keyType, form, n);
  const floorOne = await signingFloor(requests, 1);
  const floorBefore = await signingFloor(requests, workers);
  const stack = await issueThroughStore(store, requests, workers);
  const floorAfter = await signingFloor(requests, workers);
  return { floorOne, floorBefore, floorAfter, floorN: combined(floorBefore, floorAfter), stack };
}

const fmt = (value: number, digits = 2) => value.toFixed(digits);
const perRequest = ({ rate, usage }: Rate, n: number) =>
  `${fmt(1000 / rate)} ms each, ${fmt(usage.cpuMs / n)} ms CPU each, main thread ${fmt(usage.elu * 100, 0)} % busy`;

console.log(
  `bench/pod-certificates: ${count} PodCertificateRequests per key type and form, ECDSA P-256 CA, ${workers} signing workers, node ${process.version}`,
);
// Warm-up: every path once, small, so the first measured figure is not the JIT's.
await measure('ECDSAP256', '1.36', warmup);

const results: string[] = [];
const figures: Figure[] = [];
for (const [label, keyType, form] of [
  ['ECDSA P-256, 1.36 stub', 'ECDSAP256', '1.36'],
  ['ECDSA P-256, 1.35 proof', 'ECDSAP256', '1.35'],
  ['Ed25519, 1.36 stub', 'ED25519', '1.36'],
  ['Ed25519, 1.35 proof', 'ED25519', '1.35'],
] as Array<[string, PodCertificateKeyType, KeyMaterialForm]>) {
  if (count <= 0) break;
  const { floorOne, floorBefore, floorAfter, floorN, stack } = await measure(keyType, form, count);
  console.log(`\n${label}, ${count} requests:`);
  console.log(
    `  floor (verify + sign), one at a time: ${fmt(floorOne.rate, 1)} /s (${perRequest(floorOne, count)})`,
  );
  console.log(
    `  floor (verify + sign), ${workers} at a time, before: ${fmt(floorBefore.rate, 1)} /s (${perRequest(floorBefore, count)})`,
  );
  console.log(
    `  Issued via store+controllers: ${fmt(stack.rate, 1)} /s (${perRequest(stack, count)})`,
  );
  console.log(
    `  floor (verify + sign), ${workers} at a time, after: ${fmt(floorAfter.rate, 1)} /s (${perRequest(floorAfter, count)})`,
  );
  console.log(
    `  CPU the store and controllers add per request (Issued - floor ${workers} at a time): ${fmt((stack.usage.cpuMs - floorN.usage.cpuMs) / count)} ms`,
  );
  const cpuEach = (rate: Rate) => rate.usage.cpuMs / count;
  figures.push({
    name: `PodCertificateRequests Issued, ${label}`,
    value: stack.rate,
    unit: '/s',
    rawFloor: { of: 'signing', key: keyType === 'ED25519' ? 'ed25519' : 'ecdsa-p256' },
  });
  results.push(
    `${label.padEnd(23)} | ${fmt(floorOne.rate, 1).padStart(8)} /s | ${fmt(floorN.rate, 1).padStart(8)} /s | ${fmt(stack.rate, 1).padStart(8)} /s | ${fmt(1000 / stack.rate).padStart(8)} ms | ${fmt(stack.rate / floorN.rate).padStart(5)} | ${fmt(cpuEach(floorN)).padStart(5)} / ${fmt(cpuEach(stack)).padStart(5)} ms = ${fmt(cpuEach(floorN) / cpuEach(stack))}`,
  );
}
console.log(
  `\n${'key, form'.padEnd(23)} | floor 1     | floor N     | Issued      | Issued, each | ratio | CPU each: floor N / Issued`,
);
for (const line of results) console.log(line);
recordFigures('pod-certificates', figures);
