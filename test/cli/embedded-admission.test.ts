import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { type Certificate, CertificateKind } from '../../src/api/certificate.js';
import { CertificateRequestKind } from '../../src/api/certificate-request.js';
import { ClusterTrustBundleKind } from '../../src/api/cluster-trust-bundle.js';
import { silentLogger } from '../../src/api/logger.js';
import type { KubeObject } from '../../src/api/meta.js';
import {
  type PodCertificateRequest,
  PodCertificateRequestKind,
} from '../../src/api/pod-certificate-request.js';
import { SecretKind } from '../../src/api/secret.js';
import { validateCertificateSpec } from '../../src/certificates/certificate-validation.js';
import { embeddedAdmission } from '../../src/cli/embedded-admission.js';
import { startEmbeddedPlugin } from '../../src/cli/embedded-plugin.js';
import { loadManifests } from '../../src/cli/load-manifests.js';
import { isStoreError } from '../../src/store/errors.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { createMounter } from '../../src/volume/mounter.js';
import { StateDirectory } from '../../src/volume/state-directory.js';
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
  for (const kind of [SecretKind, CertificateRequestKind]) {
    t.same(
      embeddedAdmission(kind, { ...bad, kind: kind.kind }, undefined, 'create'),
      [],
      `${kind.kind}: admitted as written`,
    );
  }
});

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
      nodeId: 'test-node',
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
