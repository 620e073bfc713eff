import { X509Certificate } from 'node:crypto';
import t from 'tap';
import {
  type CertificateSigningRequest,
  CertificateSigningRequestKind,
} from '../../src/api/certificate-signing-request.js';
import { ClusterIssuerKind, IssuerKind } from '../../src/api/issuer.js';
import type { KubeObject, ResourceKind } from '../../src/api/meta.js';
import { SecretKind } from '../../src/api/secret.js';
import type { ResourceAttributes } from '../../src/api/subject-access-review.js';
import type { UserInfo } from '../../src/api/user-info.js';
import { embeddedAdmission } from '../../src/cli/node/embedded-admission.js';
import type { RecordedEvent } from '../../src/controller/memory-event-recorder.js';
import { StoreError } from '../../src/store/errors.js';
import type { MemoryStore } from '../../src/store/memory-store.js';
import type { ResourceStore } from '../../src/store/resource-store.js';
import {
  clusterIssuer,
  issuer,
  tlsSecret,
  withNamespace,
  withSpec,
} from '../support/builders/index.js';
import {
  csrChain,
  csrConditionTypes,
  csrObject,
  decideCsr,
  keyedCsr,
} from '../support/csr-fixtures.js';
import { until } from '../support/eventually.js';
import { makeCA, opensslText, opensslVerify, type TestCA } from '../support/issuer-fixtures.js';
import { type StackHarness, startHarness } from '../support/issuer-stack-harness.js';
import { waitForObject } from '../support/wait-for-object.js';

// The CSR signers against the embedded store (embedded mode's admission on every write), one
// stack for the whole file. One signing worker: a controller syncs its keys in the order they
// were queued, so a CSR created after another is a barrier: once it is answered, every event
// queued before it has been synced.

const NAMESPACE = 'shop';
const RESOURCES = 'kube-system';
const CSR_KIND = 'CertificateSigningRequest';
const SIGNERS = {
  issuerCa: 'issuers.cert-manager.io/shop.ca',
  clusterCa: 'clusterissuers.cert-manager.io/cluster-ca',
  issuerSelf: 'issuers.cert-manager.io/shop.self',
  clusterSelf: 'clusterissuers.cert-manager.io/cluster-self',
};
const KEY_ANNOTATION = 'experimental.cert-manager.io/private-key-secret-name';

interface Fixture {
  harness: StackHarness;
  store: MemoryStore;
  ca: TestCA;
  /** Status writes of CSRs by the controllers, by CSR name. */
  statusWrites: Map<string, number>;
  /** What happens just before a controller's status write of a CSR, by CSR name. */
  beforeStatusWrite: Map<string, () => Promise<void>>;
  /** Who the reviewer was asked about, and what; names in allowed get `reference`. */
  reviews: Array<{ user: UserInfo; attributes: ResourceAttributes }>;
  allowed: Set<string>;
}

/**
 * Counts the controllers' status writes of CSRs (the test's own writes go to the inner store),
 * running a CSR's hook first when it has one.
 */
function countingStatusWrites(
  store: MemoryStore,
  counts: Map<string, number>,
  hooks: Map<string, () => Promise<void>>,
): ResourceStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'updateStatus') {
        return async (kind: ResourceKind, object: KubeObject) => {
          if (kind.kind === CSR_KIND) {
            const name = object.metadata.name;
            counts.set(name, (counts.get(name) ?? 0) + 1);
            await hooks.get(name)?.();
          }
          return target.updateStatus(kind, object);
        };
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

async function fixture(): Promise<Fixture> {
  const statusWrites = new Map<string, number>();
  const beforeStatusWrite = new Map<string, () => Promise<void>>();
  const reviews: Fixture['reviews'] = [];
  const allowed = new Set<string>(['alice']);
  const harness = await startHarness(t, {
    admit: embeddedAdmission,
    signingWorkers: 1,
    wrap: (store) => countingStatusWrites(store, statusWrites, beforeStatusWrite),
    accessReviewer: async (user, attributes) => {
      reviews.push({ user, attributes });
      return allowed.has(user.username);
    },
  });
  const { store } = harness;
  const ca = await makeCA();
  const caData = { 'tls.crt': ca.certificatePem, 'tls.key': ca.keyPem };
  await store.create(SecretKind, tlsSecret(NAMESPACE, 'ca-key', caData));
  await store.create(SecretKind, tlsSecret(RESOURCES, 'cluster-ca-key', caData));
  await store.create(
    IssuerKind,
    issuer('ca', withNamespace(NAMESPACE), withSpec({ ca: { secretName: 'ca-key' } })),
  );
  await store.create(
    ClusterIssuerKind,
    clusterIssuer('cluster-ca', withSpec({ ca: { secretName: 'cluster-ca-key' } })),
  );
  await store.create(
    IssuerKind,
    issuer('self', withNamespace(NAMESPACE), withSpec({ selfSigned: {} })),
  );
  await store.create(
    ClusterIssuerKind,
    clusterIssuer('cluster-self', withSpec({ selfSigned: {} })),
  );
  await harness.issuerReason(NAMESPACE, 'ca', 'KeyPairVerified');
  await harness.issuerReason(undefined, 'cluster-ca', 'KeyPairVerified');
  await harness.issuerReason(NAMESPACE, 'self', 'IsReady');
  await harness.issuerReason(undefined, 'cluster-self', 'IsReady');
  return { harness, store, ca, statusWrites, beforeStatusWrite, reviews, allowed };
}

const f = await fixture();

function csrNamed(name: string, predicate: (csr: CertificateSigningRequest) => boolean) {
  return waitForObject<CertificateSigningRequest>(
    f.store,
    CertificateSigningRequestKind,
    name,
    undefined,
    predicate,
  );
}

const issued = (name: string) => csrNamed(name, (csr) => Boolean(csr.status?.certificate));
const failed = (name: string) => csrNamed(name, (csr) => csrConditionTypes(csr).includes('Failed'));

function eventsOf(name: string): RecordedEvent[] {
  return f.harness.events.eventsFor(CSR_KIND, name);
}

function eventOf(name: string, reason: string): Promise<RecordedEvent> {
  return f.harness.events.waitFor(
    (e) => e.kind === CSR_KIND && e.name === name && e.reason === reason,
  );
}

/** Creates a CSR for signerName (with a fresh key); SelfSigned ones get their key Secret. */
async function createCsr(
  name: string,
  signerName: string,
  options: Parameters<typeof csrObject>[3] & { keyIn?: string } = {},
) {
  const { csrPem, key, keySecret } = await keyedCsr({
    subject: { commonName: `${name}.example.com` },
  });
  if (options.keyIn) await f.store.create(SecretKind, keySecret(options.keyIn, `${name}-key`));
  const annotations = {
    ...options.annotations,
    ...(options.keyIn ? { [KEY_ANNOTATION]: `${name}-key` } : {}),
  };
  await f.store.create(
    CertificateSigningRequestKind,
    csrObject(name, signerName, csrPem, { ...options, annotations }),
  );
  return { key, csrPem };
}

let barriers = 0;

/** Waits until the controller of signerName's type has synced everything queued so far. */
async function barrier(signerName: string): Promise<void> {
  const name = `barrier-${++barriers}`;
  await createCsr(name, signerName);
  await eventOf(name, 'WaitingApproval');
}

t.test('every signer form signs an approved CSR, and the chain verifies', async (t) => {
  const forms = [
    {
      name: 'issuer-ca',
      signer: SIGNERS.issuerCa,
      message: 'Certificate fetched from issuer successfully',
    },
    {
      name: 'cluster-ca',
      signer: SIGNERS.clusterCa,
      message: 'Certificate fetched from issuer successfully',
    },
    {
      name: 'issuer-self',
      signer: SIGNERS.issuerSelf,
      keyIn: NAMESPACE,
      message: 'Certificate self signed successfully',
    },
    {
      name: 'cluster-self',
      signer: SIGNERS.clusterSelf,
      keyIn: RESOURCES,
      message: 'Certificate self signed successfully',
    },
  ];
  for (const form of forms) {
    t.test(form.name, async (t) => {
      const { key } = await createCsr(
        form.name,
        form.signer,
        form.keyIn ? { username: 'alice', keyIn: form.keyIn } : { username: 'alice' },
      );
      await decideCsr(f.store, form.name, 'Approved');
      const csr = await issued(form.name);
      const chain = csrChain(csr);
      const leaf = new X509Certificate(chain);
      const trusted = form.keyIn ? chain : f.ca.certificatePem;
      t.match(
        await opensslVerify(trusted, chain),
        /OK/,
        "openssl verifies the chain against the issuer's CA",
      );
      t.equal(
        chain.split('BEGIN CERTIFICATE').length - 1,
        1,
        'the leaf only: the self-signed root is not in the chain',
      );
      t.ok(leaf.checkPrivateKey(key), 'for the requested key');
      t.equal(leaf.subject, `CN=${form.name}.example.com`);
      t.equal(
        Date.parse(leaf.validTo) - Date.parse(leaf.validFrom),
        2160 * 3600 * 1000,
        '90 days by default',
      );
      t.same(csrConditionTypes(csr), ['Approved'], 'no condition added by the signer');
      const event = await eventOf(form.name, 'CertificateIssued');
      t.match(event, { type: 'Normal', message: form.message });
    });
  }
});

t.test('a CSR never approved gets WaitingApproval and no certificate', async (t) => {
  await createCsr('unapproved', SIGNERS.clusterCa);
  const event = await eventOf('unapproved', 'WaitingApproval');
  t.match(event, { type: 'Normal', message: 'Waiting for the Approved condition before issuing' });
  await barrier(SIGNERS.clusterCa);
  const csr = await f.store.get<CertificateSigningRequest>(
    CertificateSigningRequestKind,
    'unapproved',
  );
  t.same(csr.status ?? {}, {}, 'no certificate, no condition');
  t.equal(f.statusWrites.get('unapproved'), undefined, 'never written');
});

t.test('a denied CSR is left alone', async (t) => {
  await createCsr('denied', SIGNERS.issuerCa, { username: 'alice' });
  await eventOf('denied', 'WaitingApproval');
  const before = eventsOf('denied').length;
  await decideCsr(f.store, 'denied', 'Denied');
  await barrier(SIGNERS.issuerCa);
  const csr = await f.store.get<CertificateSigningRequest>(CertificateSigningRequestKind, 'denied');
  t.same(csrConditionTypes(csr), ['Denied'], 'no Failed');
  t.equal(csr.status?.certificate, undefined, 'no certificate');
  t.equal(eventsOf('denied').length, before, 'no event after the denial');
  t.equal(f.statusWrites.get('denied'), undefined, 'never written');
});

t.test('a signing failure is Failed with the reference reason, and never retried', async (t) => {
  const cases = [
    {
      name: 'key-mismatch',
      signer: SIGNERS.issuerSelf,
      reason: 'ErrorKeyMatch',
      message: 'Referenced private key in Secret does not match that in the request',
      prepare: async () => {
        // The annotation names another key's Secret.
        const other = await keyedCsr();
        await f.store.create(SecretKind, other.keySecret(NAMESPACE, 'not-its-key'));
        return { annotations: { [KEY_ANNOTATION]: 'not-its-key' } };
      },
    },
    {
      name: 'too-short',
      signer: SIGNERS.clusterCa,
      reason: 'InvalidDuration',
      message: 'CertificateSigningRequest minimum allowed duration is 10m0s, requested 5m0s',
      prepare: async () => ({
        annotations: { 'experimental.cert-manager.io/request-duration': '5m' },
      }),
    },
    {
      name: 'no-key-annotation',
      signer: SIGNERS.clusterSelf,
      reason: 'MissingAnnotation',
      message:
        'Missing private key reference annotation: "experimental.cert-manager.io/private-key-secret-name"',
      prepare: async () => ({}),
    },
    {
      name: 'bad-duration',
      signer: SIGNERS.clusterCa,
      reason: 'ErrorParseDuration',
      message:
        'Failed to parse requested duration: failed to parse requested duration on annotation "experimental.cert-manager.io/request-duration": time: unknown unit "d" in duration "90d"',
      prepare: async () => ({
        annotations: { 'experimental.cert-manager.io/request-duration': '90d' },
      }),
    },
  ];
  for (const c of cases) {
    t.test(c.reason, async (t) => {
      await createCsr(c.name, c.signer, { username: 'alice', ...(await c.prepare()) });
      await decideCsr(f.store, c.name, 'Approved');
      const csr = await failed(c.name);
      const condition = csr.status?.conditions?.find((x) => x.type === 'Failed');
      t.match(condition, { status: 'True', reason: c.reason, message: c.message });
      t.equal(condition?.lastTransitionTime, condition?.lastUpdateTime, 'both times set, equal');
      t.equal(csr.status?.certificate, undefined, 'no certificate');
      t.match(await eventOf(c.name, c.reason), { type: 'Warning', message: c.message });
      // Touch it (a new label queues it again), then wait until the controller caught up.
      await f.store.update(CertificateSigningRequestKind, {
        ...csr,
        metadata: { ...csr.metadata, labels: { touched: 'yes' } },
      });
      await barrier(c.signer);
      t.equal(f.statusWrites.get(c.name), 1, 'one status write, never a second attempt');
      t.equal(eventsOf(c.name).filter((e) => e.reason === c.reason).length, 1, 'one event');
      const after = await f.store.get<CertificateSigningRequest>(
        CertificateSigningRequestKind,
        c.name,
      );
      t.same(after.status, csr.status, 'the status stays as it failed');
    });
  }
});

t.test(
  'duration: the annotation wins over expirationSeconds, which wins over 90 days',
  async (t) => {
    await createCsr('by-seconds', SIGNERS.clusterCa, { expirationSeconds: 3600 });
    await createCsr('by-annotation', SIGNERS.clusterCa, {
      expirationSeconds: 3600,
      annotations: { 'experimental.cert-manager.io/request-duration': '2h30m' },
    });
    for (const [name, ms] of [
      ['by-seconds', 3600_000],
      ['by-annotation', 9000_000],
    ] as const) {
      await decideCsr(f.store, name, 'Approved');
      const leaf = new X509Certificate(csrChain(await issued(name)));
      t.equal(Date.parse(leaf.validTo) - Date.parse(leaf.validFrom), ms, name);
    }
  },
);

t.test('request-is-ca: basicConstraints CA, without cert sign', async (t) => {
  await createCsr('is-ca', SIGNERS.clusterCa, {
    usages: ['digital signature', 'server auth'],
    annotations: { 'experimental.cert-manager.io/request-is-ca': 'true' },
  });
  await decideCsr(f.store, 'is-ca', 'Approved');
  const text = await opensslText(csrChain(await issued('is-ca')));
  t.match(text, /CA:TRUE/);
  t.match(text, /X509v3 Key Usage: critical\s+Digital Signature\n/);
  t.notMatch(text, /Certificate Sign/, 'isCA does not add cert sign for CSRs');
  t.match(text, /TLS Web Server Authentication/);
});

t.test('a namespaced Issuer needs the requester to hold reference on it', async (t) => {
  await createCsr('mallory-asks', SIGNERS.issuerCa, { username: 'mallory' });
  await decideCsr(f.store, 'mallory-asks', 'Approved');
  const csr = await failed('mallory-asks');
  t.match(csr.status?.conditions?.at(-1), {
    type: 'Failed',
    reason: 'DeniedReference',
    message: 'Requester may not reference Namespaced Issuer shop/ca',
  });
  t.match(await eventOf('mallory-asks', 'DeniedReference'), { type: 'Warning' });
  t.same(
    f.reviews.filter((r) => r.user.username === 'mallory').map((r) => r.attributes),
    [
      {
        verb: 'reference',
        group: 'cert-manager.io',
        resource: 'signers',
        version: '*',
        namespace: 'shop',
        name: 'ca',
      },
      {
        verb: 'reference',
        group: 'cert-manager.io',
        resource: 'signers',
        version: '*',
        namespace: 'shop',
        name: '*',
      },
    ],
    'asked for the issuer name, then *',
  );
  f.allowed.add('mallory');
  await createCsr('mallory-again', SIGNERS.issuerCa, { username: 'mallory' });
  await decideCsr(f.store, 'mallory-again', 'Approved');
  await issued('mallory-again');
  t.pass('signed once the requester may reference the Issuer');
  const clusterAsks = f.reviews.length;
  await createCsr('anyone-cluster', SIGNERS.clusterCa, { username: 'nobody' });
  await decideCsr(f.store, 'anyone-cluster', 'Approved');
  await issued('anyone-cluster');
  t.equal(f.reviews.length, clusterAsks, 'a ClusterIssuer needs no review');
});

t.test('an issuer or a key Secret that appears later unblocks its CSRs', async (t) => {
  await createCsr('late-issuer', 'clusterissuers.cert-manager.io/late');
  await decideCsr(f.store, 'late-issuer', 'Approved');
  t.match(await eventOf('late-issuer', 'IssuerNotFound'), {
    type: 'Warning',
    message: 'Referenced ClusterIssuer /late not found',
  });
  await f.store.create(
    ClusterIssuerKind,
    clusterIssuer('late', withSpec({ ca: { secretName: 'cluster-ca-key' } })),
  );
  const signed = await issued('late-issuer');
  t.match(
    await opensslVerify(f.ca.certificatePem, csrChain(signed)),
    /OK/,
    'found through the index',
  );

  const { keySecret } = await createCsrWithoutSecret('late-key', SIGNERS.clusterSelf);
  await decideCsr(f.store, 'late-key', 'Approved');
  t.match(await eventOf('late-key', 'SecretNotFound'), {
    type: 'Warning',
    message: 'Referenced Secret kube-system/late-key-key not found',
  });
  await f.store.create(SecretKind, keySecret(RESOURCES, 'late-key-key'));
  const csr = await issued('late-key');
  t.match(await opensslVerify(csrChain(csr), csrChain(csr)), /OK/);
});

t.test('a CA issuer that is not ready or has no usable Secret makes its CSRs wait', async (t) => {
  await f.store.create(
    IssuerKind,
    issuer('broken', withNamespace(NAMESPACE), withSpec({ ca: { secretName: 'nowhere' } })),
  );
  await createCsr('waits', 'issuers.cert-manager.io/shop.broken', { username: 'alice' });
  await decideCsr(f.store, 'waits', 'Approved');
  t.match(await eventOf('waits', 'IssuerNotReady'), {
    type: 'Warning',
    message: 'Referenced Issuer shop/broken does not have a Ready status condition',
  });
  await f.store.create(
    SecretKind,
    tlsSecret(NAMESPACE, 'nowhere', { 'tls.crt': f.ca.certificatePem, 'tls.key': f.ca.keyPem }),
  );
  await issued('waits');
  t.pass('signed once the issuer became ready');
  t.equal(f.statusWrites.get('waits'), 1, 'waiting wrote nothing');
});

/** A SelfSigned CSR whose annotation names a Secret that does not exist yet. */
async function createCsrWithoutSecret(name: string, signerName: string) {
  const made = await keyedCsr({ subject: { commonName: `${name}.example.com` } });
  await f.store.create(
    CertificateSigningRequestKind,
    csrObject(name, signerName, made.csrPem, { annotations: { [KEY_ANNOTATION]: `${name}-key` } }),
  );
  return made;
}

t.test("other signers' CSRs are left alone", async (t) => {
  await createCsr('kubelet-client', 'kubernetes.io/kube-apiserver-client-kubelet');
  await decideCsr(f.store, 'kubelet-client', 'Approved');
  await createCsr('not-an-issuer', 'signers.cert-manager.io/x');
  await decideCsr(f.store, 'not-an-issuer', 'Approved');
  await barrier(SIGNERS.clusterCa);
  t.same(eventsOf('kubelet-client'), [], 'another group: no event at all');
  // cert-manager announces approval before it looks at the type (it may have seen the CSR
  // before the approval), and goes no further.
  t.same(
    eventsOf('not-an-issuer').filter((e) => e.reason !== 'WaitingApproval'),
    [],
    'an unknown type: nothing after approval',
  );
  for (const name of ['kubelet-client', 'not-an-issuer']) {
    t.equal(f.statusWrites.get(name), undefined, `${name}: never written`);
  }
});

t.test('a CSR deleted while it is signed is forgotten', async (t) => {
  await createCsr('vanishing', SIGNERS.clusterCa);
  f.beforeStatusWrite.set('vanishing', () =>
    f.store.delete(CertificateSigningRequestKind, 'vanishing'),
  );
  await decideCsr(f.store, 'vanishing', 'Approved');
  await until(() => f.statusWrites.get('vanishing') === 1, { what: 'the status write' });
  await barrier(SIGNERS.clusterCa);
  t.notOk(
    eventsOf('vanishing').some((e) => e.reason === 'CertificateIssued'),
    'no CertificateIssued for a CSR that is gone',
  );
  t.equal(f.statusWrites.get('vanishing'), 1, 'and no retry');
});

t.test('a conflicting status write is retried', async (t) => {
  await createCsr('conflicted', SIGNERS.clusterCa);
  let conflicts = 1;
  f.beforeStatusWrite.set('conflicted', async () => {
    if (conflicts-- > 0) throw new StoreError('Conflict', 'the object has been modified');
  });
  await decideCsr(f.store, 'conflicted', 'Approved');
  const csr = await issued('conflicted');
  t.match(await opensslVerify(f.ca.certificatePem, csrChain(csr)), /OK/);
  t.equal(f.statusWrites.get('conflicted'), 2, 'written on the second attempt');
});
