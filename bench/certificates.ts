/**
 * Certificates from creation to Ready per second through the whole controller stack, against
 * two floors measured in the same run: CertificateRequests signed per second through the same
 * store and issuer controllers (bench/sign.ts's "via store+controllers"), and the raw src/pki
 * cost of what a Certificate adds (key generation + CSR + signing). Also counts the store
 * writes, controller syncs and events per Certificate.
 *
 *   npm run bench:certificates [-- --certificates 200 --rsa-certificates 50 --workers 4 --warmup 500]
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import {
  type Certificate,
  CertificateKind,
  type CertificateSpec,
  NEXT_PRIVATE_KEY_LABEL,
  type PrivateKeyAlgorithm,
} from '../src/api/certificate.js';
import { isConditionTrue } from '../src/api/conditions.js';
import type { EventRecorder } from '../src/api/event.js';
import type { KubeObject, ResourceKind } from '../src/api/meta.js';
import { type Secret, SecretKind, secretValue } from '../src/api/secret.js';
import { csrRequestFor } from '../src/certificates/certificate-csr.js';
import { stackConfig, stackControllers } from '../src/cli/controller/stack-controllers.js';
import type { ControllerDefinition } from '../src/controller/controller-definition.js';
import { prepareSigner, signCertificate } from '../src/pki/certificate.js';
import { createCsr, parseCsr } from '../src/pki/csr.js';
import { decodePrivateKey, generatePrivateKey, type KeySpec } from '../src/pki/keys.js';
import { StoreError } from '../src/store/errors.js';
import { MemoryStore } from '../src/store/memory-store.js';
import type {
  ListOptions,
  ListResult,
  ResourceStore,
  Watch,
  WatchHandlers,
  WatchOptions,
} from '../src/store/resource-store.js';
import { certificateObject } from '../test/support/certificate-stack.js';
import { makeCA } from '../test/support/issuer-fixtures.js';
import {
  BENCH_ISSUER,
  csrs,
  ECDSA_P256,
  pool,
  RSA_2048,
  signThroughStore,
  startSigningStack,
  type Usage,
  usageMeter,
} from './signing-stack.js';
import { type Figure, recordFigures } from './support/figures.js';
import type { RawKeyType } from './support/raw-floor.js';

const { values } = parseArgs({
  options: {
    certificates: { type: 'string', default: '200' },
    'rsa-certificates': { type: 'string', default: '50' },
    workers: { type: 'string', default: '4' },
    warmup: { type: 'string', default: '500' },
  },
});
const ecdsaCount = Number(values.certificates);
const rsaCount = Number(values['rsa-certificates']);
const workers = Number(values.workers);
const warmup = Number(values.warmup);
// The CA behind the ClusterIssuer, the same for every run: only the Certificates' keys change.
const CA_SPEC = ECDSA_P256;
const NAMESPACE = 'bench';

function increment(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

type Verb = 'get' | 'list' | 'create' | 'update' | 'updateStatus' | 'delete';
const WRITES: readonly Verb[] = ['create', 'update', 'updateStatus', 'delete'];

/** The controller whose sync is running, for the store calls it makes. */
const syncing = new AsyncLocalStorage<string>();

/**
 * A ResourceStore that counts every call by verb and kind, failed calls by their reason, and
 * writes by the controller that made them. After freeze() it only counts calls as late.
 */
class CountingStore implements ResourceStore {
  /** `verb kind` (and `verb kind reason` for failures) → calls. */
  readonly calls = new Map<string, number>();
  /** `controller verb kind` (and `... reason` for failures) → writes. */
  readonly writesBy = new Map<string, number>();
  /** Calls made after freeze(). */
  late = 0;
  private frozen = false;

  constructor(readonly inner: ResourceStore) {}

  reset(): void {
    this.calls.clear();
    this.writesBy.clear();
  }

  freeze(): void {
    this.frozen = true;
  }

  count(verb: Verb, kind: string, reason?: string): number {
    return this.calls.get(reason ? `${verb} ${kind} ${reason}` : `${verb} ${kind}`) ?? 0;
  }

  private async counted<R>(verb: Verb, kind: ResourceKind, call: () => Promise<R>): Promise<R> {
    if (this.frozen) {
      this.late++;
      return call();
    }
    const key = `${verb} ${kind.kind}`;
    const by = WRITES.includes(verb) ? `${syncing.getStore() ?? '(bench)'} ${key}` : undefined;
    increment(this.calls, key);
    if (by) increment(this.writesBy, by);
    try {
      return await call();
    } catch (err) {
      const reason = err instanceof StoreError ? err.reason : 'error';
      increment(this.calls, `${key} ${reason}`);
      if (by) increment(this.writesBy, `${by} ${reason}`);
      throw err;
    }
  }

  get<T extends KubeObject>(kind: ResourceKind, name: string, namespace?: string): Promise<T> {
    return this.counted('get', kind, () => this.inner.get<T>(kind, name, namespace));
  }
  list<T extends KubeObject>(kind: ResourceKind, options?: ListOptions): Promise<ListResult<T>> {
    return this.counted('list', kind, () => this.inner.list<T>(kind, options));
  }
  create<T extends KubeObject>(kind: ResourceKind, obj: T): Promise<T> {
    return this.counted('create', kind, () => this.inner.create(kind, obj));
  }
  update<T extends KubeObject>(kind: ResourceKind, obj: T): Promise<T> {
    return this.counted('update', kind, () => this.inner.update(kind, obj));
  }
  updateStatus<T extends KubeObject>(kind: ResourceKind, obj: T): Promise<T> {
    return this.counted('updateStatus', kind, () => this.inner.updateStatus(kind, obj));
  }
  delete(kind: ResourceKind, name: string, namespace?: string): Promise<void> {
    return this.counted('delete', kind, () => this.inner.delete(kind, name, namespace));
  }
  watch<T extends KubeObject>(
    kind: ResourceKind,
    options: WatchOptions,
    handlers: WatchHandlers<T>,
  ): Watch {
    return this.inner.watch(kind, options, handlers);
  }
}

/** Events by `reason`: the controllers' Events, which a cluster would get as writes. */
class CountingEvents implements EventRecorder {
  readonly reasons = new Map<string, number>();
  event(_object: KubeObject, _type: string, reason: string): void {
    this.reasons.set(reason, (this.reasons.get(reason) ?? 0) + 1);
  }
}

/** Syncs per controller and their summed wall time (which overlaps: syncs await crypto). */
type SyncCounts = Map<string, { syncs: number; ms: number }>;

/** The definitions with each sync counted and timed into counts. */
function countingSyncs<Config>(
  definitions: readonly ControllerDefinition<Config>[],
  counts: SyncCounts,
): ControllerDefinition<Config>[] {
  return definitions.map((definition) => ({
    ...definition,
    setup(context) {
      const controller = definition.setup(context);
      return {
        ...controller,
        async sync(key) {
          let entry = counts.get(definition.name);
          if (!entry) {
            entry = { syncs: 0, ms: 0 };
            counts.set(definition.name, entry);
          }
          entry.syncs++;
          const start = performance.now();
          try {
            return await syncing.run(definition.name, () => controller.sync(key));
          } finally {
            entry.ms += performance.now() - start;
          }
        },
      };
    },
  }));
}

/** The spec of the benchmark's i-th Certificate: CN, one DNS SAN, 24 h, a key of spec. */
function certificateSpec(i: number, spec: KeySpec): Partial<CertificateSpec> {
  return {
    commonName: `cert-${i}`,
    dnsNames: [`cert-${i}.${NAMESPACE}.svc`],
    duration: '24h',
    issuerRef: { name: BENCH_ISSUER, kind: 'ClusterIssuer' },
    privateKey: {
      algorithm: spec.algorithm as PrivateKeyAlgorithm,
      ...(spec.size !== undefined ? { size: spec.size } : {}),
    },
  };
}

/**
 * The raw floor: what a Certificate adds in src/pki terms, width at a time: a fresh key, the
 * CSR the requestmanager builds for the spec, and the CA's signature (parse + verify the CSR,
 * sign with a prepared signer, as the CA signer keeps one). No store, no controllers.
 */
async function rawFloor(
  spec: KeySpec,
  n: number,
  width: number,
): Promise<{ rate: number; usage: Usage }> {
  const ca = await makeCA(CA_SPEC);
  const signer = await prepareSigner({
    certificatePem: ca.certificatePem,
    key: decodePrivateKey(ca.keyPem),
  });
  const template = { durationMs: 24 * 3600_000, isCA: false, usages: [] };
  const items = Array.from({ length: n }, (_, i) => i);
  const start = performance.now();
  const meter = usageMeter();
  await pool(items, width, async (i) => {
    const key = await generatePrivateKey(spec);
    const certificate = certificateObject(NAMESPACE, `cert-${i}`, certificateSpec(i, spec));
    const csrPem = await createCsr(csrRequestFor(certificate.spec, key));
    await signCertificate(await parseCsr(csrPem), template, signer);
  });
  return { rate: (n / (performance.now() - start)) * 1000, usage: meter() };
}

/** CertificateRequests of the same key type signed through the store and issuer controllers. */
async function requestsThroughStore(spec: KeySpec, n: number) {
  const requests = await csrs(n, spec);
  const store = new CountingStore(new MemoryStore());
  // Includes the stack's start and the CA's creation (a few ms) besides the n signings.
  const meter = usageMeter();
  const rate = await signThroughStore({ store, caSpec: CA_SPEC, requests, width: workers });
  const usage = meter();
  await (store.inner as MemoryStore).close();
  return { rate, store, usage };
}

interface CertificatesRun {
  /** Certificates/s from the first create until every one is Ready at revision 1 with its Secret. */
  rate: number;
  readyMs: number;
  /** From the first create until all are Ready. */
  usage: Usage;
  /** Until also the next-private-key Secrets are deleted and the statuses cleaned up. */
  settledMs: number;
  store: CountingStore;
  syncs: SyncCounts;
  events: CountingEvents;
}

/**
 * n Certificates created one after another in a store with every controller of the stack
 * running; timed until each is Ready=True at revision 1 and its Secret holds tls.key,
 * tls.crt and ca.crt, all counted through watches.
 */
async function certificatesThroughStore(spec: KeySpec, n: number): Promise<CertificatesRun> {
  const store = new CountingStore(new MemoryStore());
  const syncs: SyncCounts = new Map();
  const events = new CountingEvents();
  const stack = await startSigningStack({
    store,
    controllers: countingSyncs(stackControllers, syncs),
    config: stackConfig({ signingWorkers: workers }),
    caSpec: CA_SPEC,
    events,
  });
  // Only what the Certificates cause is counted, not the issuer's set-up.
  store.reset();
  syncs.clear();
  events.reasons.clear();
  const certificates = Array.from({ length: n }, (_, i) =>
    certificateObject(NAMESPACE, `cert-${i}`, certificateSpec(i, spec)),
  );
  const secretNames = new Set(certificates.map((c) => c.spec.secretName));
  const ready = new Set<string>();
  const settled = new Set<string>();
  const written = new Set<string>();
  const liveNextKeys = new Set<string>();
  let nextKeysCreated = 0;
  let start = 0;
  let readyMs = 0;
  let meter = usageMeter();
  let usage: Usage | undefined;
  const watches: Watch[] = [];
  const done = new Promise<number>((resolve, reject) => {
    const check = () => {
      if (!readyMs && ready.size === n && written.size === n) {
        readyMs = performance.now() - start;
        usage = meter();
      }
      if (readyMs && settled.size === n && liveNextKeys.size === 0 && nextKeysCreated >= n)
        resolve(performance.now() - start);
    };
    watches.push(
      store.watch<Certificate>(
        CertificateKind,
        { namespace: NAMESPACE },
        {
          onEvent: ({ type, object }) => {
            const { name } = object.metadata;
            const conditions = object.status?.conditions;
            const isReady =
              type !== 'DELETED' &&
              isConditionTrue(conditions, 'Ready') &&
              object.status?.revision === 1;
            if (isReady) ready.add(name);
            const isSettled =
              isReady &&
              !isConditionTrue(conditions, 'Issuing') &&
              object.status?.nextPrivateKeySecretName === undefined;
            if (isSettled) settled.add(name);
            else settled.delete(name);
            check();
          },
          onError: reject,
        },
      ),
      store.watch<Secret>(
        SecretKind,
        { namespace: NAMESPACE },
        {
          onEvent: ({ type, object }) => {
            const { name } = object.metadata;
            if (object.metadata.labels?.[NEXT_PRIVATE_KEY_LABEL] === 'true') {
              if (type === 'ADDED') nextKeysCreated++;
              if (type === 'DELETED') liveNextKeys.delete(name);
              else liveNextKeys.add(name);
            } else if (
              type !== 'DELETED' &&
              secretNames.has(name) &&
              ['tls.key', 'tls.crt', 'ca.crt'].every((key) => !!secretValue(object, key))
            ) {
              written.add(name);
            }
            check();
          },
          onError: reject,
        },
      ),
    );
  });
  start = performance.now();
  meter = usageMeter();
  for (const certificate of certificates) await store.create(CertificateKind, certificate);
  const settledMs = await done;
  store.freeze();
  await delay(1000);
  for (const watch of watches) watch.stop();
  await stack.stop();
  await (store.inner as MemoryStore).close();
  return {
    rate: (n / readyMs) * 1000,
    readyMs,
    usage: usage as Usage,
    settledMs,
    store,
    syncs,
    events,
  };
}

const fmt = (value: number, digits = 2) => value.toFixed(digits);

function printWrites(label: string, store: CountingStore, n: number, kinds: readonly string[]) {
  console.log(`  ${label} per object (n = ${n}):`);
  console.log('    kind               | create | update | updateStatus | delete | get  | failed');
  for (const kind of kinds) {
    const per = (verb: Verb) => fmt(store.count(verb, kind) / n);
    const failed = [...store.calls]
      .filter(([key]) => key.split(' ')[1] === kind && key.split(' ').length === 3)
      .map(([key, calls]) => `${key.split(' ')[0]} ${key.split(' ')[2]} ${fmt(calls / n)}`)
      .join(', ');
    console.log(
      `    ${kind.padEnd(18)} | ${per('create').padStart(6)} | ${per('update').padStart(6)} | ${per('updateStatus').padStart(12)} | ${per('delete').padStart(6)} | ${per('get').padStart(4)} | ${failed || '-'}`,
    );
  }
  const total = WRITES.reduce(
    (sum, verb) => sum + kinds.reduce((s, kind) => s + store.count(verb, kind), 0),
    0,
  );
  console.log(`    writes in all: ${fmt(total / n)} per object`);
}

/** Writes per object by the controller that made them (the bench's own creates as `(bench)`). */
function printWritesBy(store: CountingStore, n: number) {
  console.log('  writes per Certificate by controller (failed ones in brackets):');
  const controllers = new Map<string, string[]>();
  for (const [key, calls] of store.writesBy) {
    const [controller = '', verb, kind, reason] = key.split(' ');
    if (reason) continue;
    const failures = [...store.writesBy]
      .filter(([other]) => other.startsWith(`${key} `))
      .map(([other, failed]) => `${other.split(' ')[3]} ${fmt(failed / n)}`);
    const text = `${verb} ${kind} ${fmt(calls / n)}${failures.length ? ` [${failures.join(', ')}]` : ''}`;
    controllers.set(controller, [...(controllers.get(controller) ?? []), text]);
  }
  for (const [controller, writes] of controllers)
    console.log(`    ${controller.padEnd(40)} ${writes.join(', ')}`);
}

console.log(
  `bench/certificates: ${ecdsaCount} ECDSA P-256 and ${rsaCount} RSA-2048 Certificates, ECDSA P-256 CA, ${workers} signing workers, node ${process.version}`,
);
// Warm-up: every path once, long enough that the figures are the steady rates and not V8's
// first second (after 20 warm-up Certificates the rate was about three fifths of the warm one).
await rawFloor(ECDSA_P256, warmup, workers);
await requestsThroughStore(ECDSA_P256, warmup);
await certificatesThroughStore(ECDSA_P256, warmup);

const usageText = (usage: Usage, n: number) =>
  `${fmt(usage.cpuMs / n, 1)} ms CPU each, main thread ${fmt(usage.elu * 100, 0)} % busy`;

const results: string[] = [];
const figures: Figure[] = [];
for (const [label, spec, n, rawKey] of [
  ['ECDSA P-256', ECDSA_P256, ecdsaCount, 'ecdsa-p256'],
  ['RSA-2048', RSA_2048, rsaCount, 'rsa-2048'],
] as Array<[string, KeySpec, number, RawKeyType]>) {
  if (n <= 0) continue;
  const floorOne = await rawFloor(spec, n, 1);
  const floorN = await rawFloor(spec, n, workers);
  const requests = await requestsThroughStore(spec, n);
  const run = await certificatesThroughStore(spec, n);
  console.log(`\n${label}, ${n} Certificates:`);
  console.log(
    `  raw floor (key + CSR + sign), one at a time: ${fmt(floorOne.rate, 1)} /s (${usageText(floorOne.usage, n)})`,
  );
  console.log(
    `  raw floor (key + CSR + sign), ${workers} at a time: ${fmt(floorN.rate, 1)} /s (${usageText(floorN.usage, n)})`,
  );
  console.log(
    `  CertificateRequests signed via store+controllers: ${fmt(requests.rate, 1)} /s (${usageText(requests.usage, n)})`,
  );
  console.log(
    `  Certificates Ready via store+controllers: ${fmt(run.rate, 1)} /s (${usageText(run.usage, n)})`,
  );
  console.log(
    `    all Ready after ${fmt(run.readyMs / 1000)} s, settled (next keys deleted) after ${fmt(run.settledMs / 1000)} s; ${run.store.late} store calls in the second after`,
  );
  printWrites('store calls of the CertificateRequest path', requests.store, n, [
    'CertificateRequest',
  ]);
  printWrites('store calls of the Certificate path', run.store, n, [
    'Certificate',
    'CertificateRequest',
    'Secret',
  ]);
  printWritesBy(run.store, n);
  console.log('  syncs per Certificate, and their summed wall time (syncs overlap, await crypto):');
  for (const [name, { syncs, ms }] of run.syncs)
    console.log(
      `    ${name.padEnd(40)} ${fmt(syncs / n).padStart(6)}  ${fmt(ms / n).padStart(7)} ms`,
    );
  const eventList = [...run.events.reasons]
    .map(([reason, count]) => `${reason} ${fmt(count / n)}`)
    .join(', ');
  console.log(`  events per Certificate: ${eventList}`);
  figures.push({
    name: `Certificates Ready, ${label} keys`,
    value: run.rate,
    unit: '/s',
    rawFloor: { of: 'issuance', key: rawKey },
  });
  results.push(
    `${label.padEnd(12)}| ${fmt(floorOne.rate, 1).padStart(8)} /s | ${fmt(floorN.rate, 1).padStart(8)} /s | ${fmt(requests.rate, 1).padStart(8)} /s | ${fmt(run.rate, 1).padStart(8)} /s | ${fmt(run.rate / requests.rate).padStart(7)} | ${fmt(run.rate / floorN.rate).padStart(7)}`,
  );
}
console.log(
  '\nkey         | raw 1       | raw N       | CRs signed  | Certs Ready | ÷ CRs   | ÷ raw N',
);
for (const line of results) console.log(line);
recordFigures('certificates', figures);
