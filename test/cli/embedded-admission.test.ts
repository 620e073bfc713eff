import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { type Certificate, CertificateKind } from '../../src/api/certificate.js';
import {
  type CertificateRequest,
  CertificateRequestKind,
} from '../../src/api/certificate-request.js';
import { ClusterTrustBundleKind } from '../../src/api/cluster-trust-bundle.js';
import type { Condition } from '../../src/api/conditions.js';
import { ClusterIssuerKind, type Issuer, IssuerKind } from '../../src/api/issuer.js';
import { silentLogger } from '../../src/api/logger.js';
import type { KubeObject } from '../../src/api/meta.js';
import {
  type PodCertificateRequest,
  PodCertificateRequestKind,
} from '../../src/api/pod-certificate-request.js';
import { SecretKind } from '../../src/api/secret.js';
import { validateCertificateSpec } from '../../src/certificates/certificate-validation.js';
import { embeddedAdmission } from '../../src/cli/node/embedded-admission.js';
import { startEmbeddedPlugin } from '../../src/cli/node/embedded-plugin.js';
import { loadManifests } from '../../src/cli/node/load-manifests.js';
import { createCsr } from '../../src/pki/csr.js';
import { generatePrivateKey } from '../../src/pki/keys.js';
import { decodePemBlocks, encodePem } from '../../src/pki/pem.js';
import { isStoreError } from '../../src/store/errors.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { StateDirectory } from '../../src/store/state-directory/state-directory.js';
import { createMounter } from '../../src/volume/create-mounter.js';
import { volumeManagerSettings } from '../../src/volume-manager/settings.js';
import {
  certificateRequest,
  certificateRequestFrom,
  clusterIssuer,
  issuer,
  withAnnotations,
  withCsr,
  withIssuerRef,
  withNamespace,
  withSpec,
} from '../support/builders/index.js';
import { rejection, rejectionMessage } from '../support/eventually.js';
import { kubeletRequest, podIdentity } from '../support/pod-certificates.js';
import { tempDir } from '../support/temp-dir.js';

const certificate = (spec: Partial<Certificate['spec']>): Certificate => ({
  apiVersion: 'cert-manager.io/v1',
  kind: 'Certificate',
  metadata: { name: 'web', namespace: 'team' },
  spec: spec as Certificate['spec'],
});

t.test("embedded admission: Certificates get cert-manager's webhook validation", async (t) => {
  const bad = certificate({ issuerRef: { name: 'ca' }, dnsNames: ['web'] });
  t.same(
    embeddedAdmission(CertificateKind, bad, undefined, 'create'),
    validateCertificateSpec(bad.spec),
    'the errors of validateCertificateSpec',
  );
  t.same(embeddedAdmission(CertificateKind, bad, undefined, 'create'), [
    'spec.secretName: Required value: must be specified',
  ]);
  const good = certificate({ secretName: 'web-tls', issuerRef: { name: 'ca' }, dnsNames: ['w'] });
  t.same(embeddedAdmission(CertificateKind, good, bad, 'update'), [], 'a valid one is admitted');
  const { spec: _spec, ...withoutSpec } = bad;
  t.match(
    embeddedAdmission(CertificateKind, withoutSpec as KubeObject, undefined, 'create'),
    ['spec.secretName: Required value', 'spec.issuerRef.name: Required value'],
    'no spec at all is refused, not a crash',
  );
  t.same(
    embeddedAdmission(SecretKind, { ...bad, kind: 'Secret' }, undefined, 'create'),
    [],
    'a Secret is admitted as written',
  );
});

const csrPem = await createCsr({
  key: await generatePrivateKey({ algorithm: 'ECDSA' }),
  dnsNames: ['web.team.svc'],
});

/** The request of the cases: team/web-1 for the Issuer ca (give it a CSR with withCsr). */
const web1 = certificateRequest(
  'web-1',
  withNamespace('team'),
  withIssuerRef({ name: 'ca', kind: 'Issuer' }),
);

const approved: Condition = {
  type: 'Approved',
  status: 'True',
  reason: 'cert-manager.io',
  message: 'Certificate request has been approved by cert-manager.io',
  lastTransitionTime: '2026-01-01T00:00:00Z',
};

t.test(
  "embedded admission: the store refuses CertificateRequests cert-manager's webhook refuses",
  async (t) => {
    const store = new MemoryStore({ admit: embeddedAdmission });
    t.teardown(() => store.close());
    const der = Buffer.from(decodePemBlocks(csrPem)[0]?.der ?? []);
    der[der.length - 1] = (der[der.length - 1] ?? 0) ^ 1;
    const forged = await rejection(
      store.create(
        CertificateRequestKind,
        certificateRequestFrom(web1, withCsr(encodePem('CERTIFICATE REQUEST', der))),
      ),
    );
    t.ok(isStoreError(forged, 'Invalid'));
    t.match(
      (forged as Error).message,
      /^CertificateRequest\.cert-manager\.io "web-1" is invalid: spec\.request: Invalid value: \[\]byte\{0x2d, 0x2d, [^…]+…\(\d+ characters\): x509: ECDSA verification failure$/,
      'a CSR whose signature does not verify, with the field path',
    );
    t.same((await store.list(CertificateRequestKind)).items, [], 'nothing stored');

    const created = await store.create<CertificateRequest>(
      CertificateRequestKind,
      certificateRequestFrom(
        web1,
        withCsr(csrPem),
        withAnnotations({ 'cert-manager.io/certificate-revision': '1' }),
      ),
    );
    t.equal(
      await rejectionMessage(
        store.update(CertificateRequestKind, {
          ...created,
          spec: { ...created.spec, duration: '1h' },
        }),
      ),
      'CertificateRequest.cert-manager.io "web-1" is invalid: spec: Forbidden: cannot change spec after creation',
    );
    t.equal(
      await rejectionMessage(
        store.update(CertificateRequestKind, {
          ...created,
          metadata: { ...created.metadata, annotations: {} },
        }),
      ),
      'CertificateRequest.cert-manager.io "web-1" is invalid: metadata.annotations.cert-manager.io/certificate-revision: Forbidden: cannot change cert-manager annotation after creation',
    );
    const labelled = await store.update<CertificateRequest>(CertificateRequestKind, {
      ...created,
      metadata: { ...created.metadata, labels: { team: 'a' } },
    });
    t.same(labelled.metadata.labels, { team: 'a' }, 'other metadata may change');

    const approvedRequest = await store.updateStatus<CertificateRequest>(CertificateRequestKind, {
      ...labelled,
      status: { conditions: [approved] },
    });
    t.same(approvedRequest.status?.conditions, [approved], 'approving is a status write');
    t.equal(
      await rejectionMessage(
        store.updateStatus(CertificateRequestKind, {
          ...approvedRequest,
          status: { conditions: [{ ...approved, type: 'Denied' }] },
        }),
      ),
      `CertificateRequest.cert-manager.io "web-1" is invalid: status.conditions: Forbidden: 'Approved' condition may not be modified once set`,
      'an approval is never taken back',
    );
    t.equal(
      await rejectionMessage(
        store.updateStatus(CertificateRequestKind, {
          ...approvedRequest,
          status: { conditions: [approved, { ...approved, type: 'Denied' }] },
        }),
      ),
      `CertificateRequest.cert-manager.io "web-1" is invalid: status.conditions: Forbidden: both 'Denied' and 'Approved' conditions cannot coexist`,
    );
    t.same(
      (await store.get<CertificateRequest>(CertificateRequestKind, 'web-1', 'team')).status
        ?.conditions,
      [approved],
      'the refused writes changed nothing',
    );
  },
);

t.test(
  'embedded admission: Issuers and ClusterIssuers are validated on create and update',
  async (t) => {
    const store = new MemoryStore({ admit: embeddedAdmission });
    t.teardown(() => store.close());
    t.equal(
      await rejectionMessage(
        store.create(
          IssuerKind,
          issuer(
            'two',
            withNamespace('team'),
            withSpec({ ca: { secretName: 'root' }, selfSigned: {} }),
          ),
        ),
      ),
      'Issuer.cert-manager.io "two" is invalid: spec.selfSigned: Forbidden: may not specify more than one issuer type',
    );
    t.equal(
      await rejectionMessage(
        store.create(
          ClusterIssuerKind,
          clusterIssuer('root', withSpec({ ca: { secretName: '' } })),
        ),
      ),
      'ClusterIssuer.cert-manager.io "root" is invalid: spec.ca.secretName: Required value',
    );
    t.same((await store.list(IssuerKind)).items, [], 'no Issuer stored');
    t.same((await store.list(ClusterIssuerKind)).items, [], 'no ClusterIssuer stored');

    const created = await store.create<Issuer>(
      IssuerKind,
      issuer('ca', withNamespace('team'), withSpec({ ca: { secretName: 'root' } })),
    );
    t.equal(
      await rejectionMessage(store.update(IssuerKind, { ...created, spec: {} })),
      'Issuer.cert-manager.io "ca" is invalid: spec: Required value: at least one issuer must be configured',
    );
    const acme = await store.create<Issuer>(
      IssuerKind,
      issuer(
        'letsencrypt',
        withNamespace('team'),
        withSpec({ acme: { server: 'https://acme.example/directory' } }),
      ),
    );
    t.ok(acme.metadata.uid, 'an ACME issuer is stored though cert-csi never signs for it');
    t.same(
      embeddedAdmission(IssuerKind, { ...created, spec: {} } as Issuer, created, 'status'),
      [],
      'a status write is not a spec write',
    );
  },
);

t.test(
  'the embedded plugin: its store refuses an invalid Certificate, and a bad --manifests file stops start-up with nothing written',
  async (t) => {
    const dir = await tempDir(t);
    const stateDir = join(dir, 'state');
    const manifests = join(dir, 'manifests');
    await mkdir(manifests);
    await writeFile(
      join(manifests, 'a-secret.yaml'),
      'apiVersion: v1\nkind: Secret\nmetadata: {name: ca, namespace: team}\n',
    );
    await writeFile(
      join(manifests, 'b-web.yaml'),
      [
        'apiVersion: cert-manager.io/v1',
        'kind: Certificate',
        'metadata: {name: web, namespace: team}',
        'spec:',
        '  secretName: web-tls',
        '  issuerRef: {name: ca}',
        '  dnsNames: [web.team.svc]',
        '  duration: 30m',
      ].join('\n'),
    );
    let direct: unknown;
    const started = startEmbeddedPlugin({
      endpoint: { kind: 'unix', path: join(dir, 'csi.sock') },
      settings: volumeManagerSettings({ nodeId: 'test-node' }),
      driverName: 'csi.cert-manager.io',
      version: '0.1.0-test',
      dataRoot: join(dir, 'volumes'),
      stateDir,
      mounter: createMounter({ mode: 'direct' }),
      logger: silentLogger,
      clusterResourceNamespace: 'kube-system',
      beforeIssuers: async (store) => {
        direct = await rejection(
          store.create(CertificateKind, certificate({ issuerRef: { name: 'ca' } })),
        );
        await loadManifests(store, manifests);
      },
    });
    const message = await rejectionMessage(started);
    t.ok(isStoreError(direct, 'Invalid'), 'the store itself refuses an invalid Certificate');
    t.match(
      (direct as Error).message,
      /^Certificate\.cert-manager\.io "web" is invalid: \[spec\.secretName: Required value: must be specified, spec: Invalid value: "": at least one of commonName/,
    );
    t.equal(
      message,
      `${join(manifests, 'b-web.yaml')}: Certificate.cert-manager.io "web" is invalid: spec.duration: Invalid value: 30m0s: certificate duration must be greater than 1h0m0s`,
      'start-up fails naming the file, the object and the field',
    );

    const reopened = await MemoryStore.open({ persistence: new StateDirectory(stateDir) });
    t.teardown(() => reopened.close());
    t.same(
      (await reopened.list(SecretKind)).items,
      [],
      'not even the Secret before it was written',
    );
    t.same((await reopened.list(CertificateKind)).items, [], 'nor any Certificate');
  },
);

t.test(
  "embedded admission: the API server's pod certificate rules hold in the embedded store",
  async (t) => {
    const store = new MemoryStore({ admit: embeddedAdmission });
    t.teardown(() => store.close());
    const pod = podIdentity('shop', 'api-0');
    const { request } = await kubeletRequest(pod, 'example.com/spiffe', 'ED25519', '1.36');
    const created = await store.create<PodCertificateRequest>(PodCertificateRequestKind, request);
    const specChange = await rejectionMessage(
      store.update(PodCertificateRequestKind, {
        ...created,
        spec: { ...created.spec, nodeName: 'node-2' },
      }),
    );
    t.match(
      specChange,
      /^PodCertificateRequest\.certificates\.k8s\.io "req-\w+" is invalid: spec: /,
    );
    const now = new Date();
    const issuedWithoutChain = await rejection(
      store.updateStatus(PodCertificateRequestKind, {
        ...created,
        status: {
          conditions: [
            {
              type: 'Issued',
              status: 'True',
              reason: 'Issued',
              message: 'x',
              lastTransitionTime: now.toISOString().replace(/\.\d+Z$/, 'Z'),
            },
          ],
        },
      }),
    );
    t.ok(isStoreError(issuedWithoutChain, 'Invalid'), 'an Issued status without a chain');
    t.match(String((issuedWithoutChain as Error).message), /status\.certificateChain/);
    const denied = await store.updateStatus<PodCertificateRequest>(PodCertificateRequestKind, {
      ...created,
      status: {
        conditions: [
          {
            type: 'Denied',
            status: 'True',
            reason: 'PolicyDenied',
            message: 'no',
            lastTransitionTime: now.toISOString().replace(/\.\d+Z$/, 'Z'),
          },
        ],
      },
    });
    t.equal(denied.status?.conditions?.[0]?.type, 'Denied', 'a Denied status is admitted');
    const again = await rejectionMessage(
      store.updateStatus(PodCertificateRequestKind, { ...denied, status: {} }),
    );
    t.match(again, /immutable after PodCertificateRequest is issued, denied, or failed/);

    const badBundle = await rejectionMessage(
      store.create(ClusterTrustBundleKind, {
        apiVersion: 'certificates.k8s.io/v1beta1',
        kind: 'ClusterTrustBundle',
        metadata: { name: 'other:primary' },
        spec: { signerName: 'example.com/spiffe', trustBundle: 'not PEM' },
      }),
    );
    t.match(badBundle, /must be named with prefix example\.com:spiffe:/);
    t.same((await store.list(ClusterTrustBundleKind)).items, [], 'nothing stored');
  },
);

t.test('embedded admission is bounded as the webhook is: a flood of bad items', async (t) => {
  const flood = certificate({
    secretName: 'web-tls',
    issuerRef: { name: 'ca' },
    emailAddresses: Array.from({ length: 250_000 }, (_, i) => `x${i}`),
    ipAddresses: Array.from({ length: 250_000 }, (_, i) => `ip${i}`),
  });
  const errors = embeddedAdmission(CertificateKind, flood, undefined, 'create');
  t.equal(errors.length, 22, 'ten per list and a count each');
  t.ok(errors.includes('spec.ipAddresses: and 249990 more errors (only the first 10 are listed)'));
  const store = new MemoryStore({ admit: embeddedAdmission });
  t.teardown(() => store.close());
  const message = await rejectionMessage(store.create(CertificateKind, flood));
  t.match(message, /^Certificate\.cert-manager\.io "web" is invalid: \[spec\.ipAddresses\[0\]/);
  t.ok(Buffer.byteLength(message) < 16 * 1024, `${Buffer.byteLength(message)} bytes`);
  t.same((await store.list(CertificateKind)).items, [], 'nothing stored');
});
