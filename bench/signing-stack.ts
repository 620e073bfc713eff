/**
 * What the signing benchmarks share: CSRs, a worker pool, a CPU meter, a controller stack with
 * a CA ClusterIssuer on a store, and the CertificateRequest signing rate through it.
 */
import { type EventLoopUtilization, performance } from 'node:perf_hooks';
import {
  type CertificateRequest,
  CertificateRequestKind,
  finalState,
} from '../src/api/certificate-request.js';
import type { EventRecorder } from '../src/api/event.js';
import { ClusterIssuerKind } from '../src/api/issuer.js';
import { SecretKind } from '../src/api/secret.js';
import type { ControllerDefinition } from '../src/controller/controller-definition.js';
import { type RunningControllers, startControllers } from '../src/controller/controller-manager.js';
import { issuerControllers } from '../src/issuer/controllers.js';
import { issuerStackConfig } from '../src/issuer/stack-config.js';
import { prepareSigner, signCertificate } from '../src/pki/certificate.js';
import { createCsr, forgetParsedCsrs, parseCsr } from '../src/pki/csr.js';
import { decodePrivateKey, generatePrivateKey, type KeySpec } from '../src/pki/keys.js';
import type { ResourceStore } from '../src/store/resource-store.js';
import {
  certificateRequest,
  clusterIssuer,
  tlsSecret,
  withCsr,
  withNamespace,
  withSpec,
} from '../test/support/builders/index.js';
import { makeCA } from '../test/support/issuer-fixtures.js';

/** The name of the benchmarks' CA ClusterIssuer (its Secret is kube-system/bench-ca). */
export const BENCH_ISSUER = 'bench-ca';

export const ECDSA_P256: KeySpec = { algorithm: 'ECDSA', size: 256 };
export const RSA_2048: KeySpec = { algorithm: 'RSA', size: 2048 };

/** CPU (every thread of the process) and the main thread's busy share over a span of time. */
export interface Usage {
  cpuMs: number;
  /** Event-loop utilization: the share of the span the main thread was busy. */
  elu: number;
}

/** Starts measuring; the function returned gives the usage since. */
export function usageMeter(): () => Usage {
  const cpu = process.cpuUsage();
  const elu: EventLoopUtilization = performance.eventLoopUtilization();
  return () => {
    const { user, system } = process.cpuUsage(cpu);
    return {
      cpuMs: (user + system) / 1000,
      elu: performance.eventLoopUtilization(elu).utilization,
    };
  };
}

/** Runs fn over items, width at a time. */
export async function pool<T>(
  items: readonly T[],
  width: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
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

/** n CSRs for fresh keys of spec, each with a CN and one DNS SAN. */
export async function csrs(n: number, spec: KeySpec = ECDSA_P256): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const key = await generatePrivateKey(spec);
    out.push(
      await createCsr({ key, subject: { commonName: `pod-${i}` }, dnsNames: [`pod-${i}.ns.svc`] }),
    );
  }
  return out;
}

/**
 * bench/sign.ts's floor: parse + verify the CSR and sign with a prepared signer; no store, no
 * controllers. No chain is built: the CA is a self-signed root, for which the CA signer returns
 * the leaf and the root as they are (until 2026-11-29 the floor built and verified the chain
 * anyway, half its cost, so the stack looked faster than its floor).
 */
export async function signingFloor(
  caSpec: KeySpec,
  requests: string[],
  width: number,
): Promise<number> {
  const ca = await makeCA(caSpec);
  const signer = await prepareSigner({
    certificatePem: ca.certificatePem,
    key: decodePrivateKey(ca.keyPem),
  });
  const template = { durationMs: 24 * 3600_000, isCA: false, usages: [] };
  // Each measure parses every CSR for the first time, as a live signer would.
  forgetParsedCsrs();
  const start = performance.now();
  await pool(requests, width, async (csrPem) => {
    await signCertificate(await parseCsr(csrPem), template, signer);
  });
  return (requests.length / (performance.now() - start)) * 1000;
}

/**
 * Starts controllers on store with a fresh CA of caSpec behind the ClusterIssuer `bench-ca`
 * (with issuerAnnotations, if given), and resolves once the issuer has verified the key pair.
 */
export async function startSigningStack<Config>(options: {
  store: ResourceStore;
  controllers: readonly ControllerDefinition<Config>[];
  config: Config;
  caSpec: KeySpec;
  events?: EventRecorder;
  issuerAnnotations?: Record<string, string>;
}): Promise<RunningControllers> {
  const { store } = options;
  const stack = await startControllers({
    store,
    controllers: options.controllers,
    config: options.config,
    ...(options.events ? { events: options.events } : {}),
  });
  const ca = await makeCA(options.caSpec);
  await store.create(
    SecretKind,
    tlsSecret('kube-system', BENCH_ISSUER, {
      'tls.crt': ca.certificatePem,
      'tls.key': ca.keyPem,
    }),
  );
  const benchIssuer = clusterIssuer(BENCH_ISSUER, withSpec({ ca: { secretName: BENCH_ISSUER } }));
  if (options.issuerAnnotations) benchIssuer.metadata.annotations = options.issuerAnnotations;
  await store.create(ClusterIssuerKind, benchIssuer);
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
  return stack;
}

/**
 * CertificateRequests created in store one after another, signed by the issuer controllers
 * (approver, CA signer with `width` workers, issuer readiness); the rate from the first create
 * until every request is Issued, counted through a watch. The caller closes store.
 */
export async function signThroughStore(options: {
  store: ResourceStore;
  caSpec: KeySpec;
  requests: string[];
  width: number;
  events?: EventRecorder;
}): Promise<number> {
  const { store, requests } = options;
  const stack = await startSigningStack({
    store,
    controllers: issuerControllers,
    config: issuerStackConfig({ signingWorkers: options.width }),
    caSpec: options.caSpec,
    ...(options.events ? { events: options.events } : {}),
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
  // The floor parsed these CSRs: the stack must not find them held.
  forgetParsedCsrs();
  const start = performance.now();
  for (const [i, csrPem] of requests.entries()) {
    await store.create(
      CertificateRequestKind,
      certificateRequest(
        `req-${i}`,
        withNamespace('bench'),
        withSpec({
          issuerRef: { name: BENCH_ISSUER, kind: 'ClusterIssuer' },
          duration: '24h',
        }),
        withCsr(csrPem),
      ),
    );
  }
  await allIssued;
  const rate = (requests.length / (performance.now() - start)) * 1000;
  await stack.stop();
  return rate;
}
