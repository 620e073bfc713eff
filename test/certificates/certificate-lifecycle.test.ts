import { X509Certificate } from 'node:crypto';
import t from 'tap';
import {
  type Certificate,
  CertificateKind,
  NEXT_PRIVATE_KEY_LABEL,
} from '../../src/api/certificate.js';
import {
  type CertificateRequest,
  CertificateRequestKind,
} from '../../src/api/certificate-request.js';
import { setCondition } from '../../src/api/conditions.js';
import { type Secret, SecretKind } from '../../src/api/secret.js';
import { decodePrivateKey, publicKeysEqual } from '../../src/pki/keys.js';
import type { ResourceStore } from '../../src/store/resource-store.js';
import {
  CERTIFICATE_WAIT_MS,
  certificateObject,
  conditionReason,
  createCaClusterIssuer,
  secretText,
  startCertificateStack,
  updateCertificate,
} from '../support/certificate-stack.js';
import { until } from '../support/eventually.js';
import { opensslVerify } from '../support/issuer-fixtures.js';
import { waitForObject } from '../support/wait-for-object.js';

const NS = 'apps';

/** Sets Issuing=True by hand, as `cert-csi renew --certificate` (and cmctl) does. */
function triggerByHand(store: ResourceStore, name: string): Promise<Certificate> {
  return updateCertificate(
    store,
    NS,
    name,
    (current) => ({
      ...current,
      status: {
        ...current.status,
        conditions: setCondition(
          current.status?.conditions,
          {
            type: 'Issuing',
            status: 'True',
            reason: 'ManuallyTriggered',
            message: 'Certificate re-issuance manually triggered',
          },
          new Date(),
        ),
      },
    }),
    'updateStatus',
  );
}

t.test('a new Certificate is issued into its Secret as cert-manager does it', async (t) => {
  const stack = await startCertificateStack(t);
  const caPem = await createCaClusterIssuer(stack.store);
  await stack.store.create(
    CertificateKind,
    certificateObject(NS, 'web', {
      commonName: 'web.apps.svc',
      dnsNames: ['web.apps.svc', 'web'],
      subject: { organizations: ['cert-csi'] },
      privateKey: { algorithm: 'ECDSA', size: 256 },
      additionalOutputFormats: [{ type: 'CombinedPEM' }, { type: 'DER' }],
      secretTemplate: { labels: { team: 'a' }, annotations: { 'example.com/x': 'y' } },
    }),
  );
  const ready = await stack.ready(NS, 'web', 1);
  t.equal(conditionReason(ready, 'Ready'), 'Ready');
  t.ok(ready.status?.notBefore && ready.status?.notAfter && ready.status?.renewalTime);
  t.equal(ready.status?.nextPrivateKeySecretName, undefined, 'the next-key name is cleared');

  const secret = await stack.secret(NS, 'web-tls');
  t.equal(secret.type, 'kubernetes.io/tls');
  const keyPem = secretText(secret, 'tls.key');
  t.match(keyPem, /^-----BEGIN EC PRIVATE KEY-----/, 'PKCS1 (the default) is SEC1 for ECDSA');
  const chain = secretText(secret, 'tls.crt');
  t.equal(secretText(secret, 'ca.crt'), caPem);
  t.match(await opensslVerify(caPem, chain), /OK/);
  const leaf = new X509Certificate(chain);
  t.ok(publicKeysEqual(leaf.publicKey, decodePrivateKey(keyPem)));
  t.equal(secretText(secret, 'tls-combined.pem'), `${keyPem}\n${chain}`);
  t.same(
    Buffer.from(secret.data?.['key.der'] ?? '', 'base64'),
    decodePrivateKey(keyPem).export({ type: 'sec1', format: 'der' }),
  );
  t.match(secret.metadata.labels, { team: 'a', 'controller.cert-manager.io/fao': 'true' });
  t.match(secret.metadata.annotations, {
    'example.com/x': 'y',
    'cert-manager.io/certificate-name': 'web',
    'cert-manager.io/common-name': 'web.apps.svc',
    'cert-manager.io/alt-names': 'web.apps.svc,web',
    'cert-manager.io/subject-organizations': 'cert-csi',
    'cert-manager.io/issuer-name': 'ca',
    'cert-manager.io/issuer-kind': 'ClusterIssuer',
    'cert-manager.io/issuer-group': '',
  });

  const requests = (await stack.store.list<CertificateRequest>(CertificateRequestKind)).items;
  t.same(
    requests.map((r) => [
      r.metadata.name,
      r.metadata.annotations?.['cert-manager.io/certificate-revision'],
    ]),
    [['web-1', '1']],
  );
  const leftover = (await stack.store.list<Secret>(SecretKind, { namespace: NS })).items.filter(
    (s) => s.metadata.labels?.[NEXT_PRIVATE_KEY_LABEL] === 'true',
  );
  t.same(leftover, [], 'no next-private-key Secret is left');
  const reasons = stack.events
    .eventsFor('Certificate', 'web', NS)
    .map((e) => `${e.reason}: ${e.message}`);
  t.match(reasons, [
    'Issuing: Issuing certificate as Secret does not exist',
    /^Generated: Stored new private key in temporary Secret resource "web-/,
    'Requested: Created new CertificateRequest resource "web-1"',
    'Issuing: The certificate has been successfully issued',
  ]);
});

t.test('rotationPolicy Always gives a new key at each revision, Never keeps it', async (t) => {
  const stack = await startCertificateStack(t);
  await createCaClusterIssuer(stack.store);
  for (const policy of ['Always', 'Never'] as const) {
    const name = `rotate-${policy.toLowerCase()}`;
    await stack.store.create(
      CertificateKind,
      certificateObject(NS, name, {
        dnsNames: [`${name}.example`],
        privateKey: { algorithm: 'ECDSA', rotationPolicy: policy },
      }),
    );
    await stack.ready(NS, name, 1);
    const first = secretText(await stack.secret(NS, `${name}-tls`), 'tls.key');
    await triggerByHand(stack.store, name);
    await stack.ready(NS, name, 2);
    const second = secretText(await stack.secret(NS, `${name}-tls`), 'tls.key');
    if (policy === 'Always') t.not(second, first, 'Always: a new key');
    else t.equal(second, first, 'Never: the same key');
    // The revisionmanager prunes once it sees Ready: wait for it rather than race it.
    const requests = await until(
      async () => {
        const names = (await stack.store.list<CertificateRequest>(CertificateRequestKind)).items
          .filter((r) => r.metadata.annotations?.['cert-manager.io/certificate-name'] === name)
          .map((r) => r.metadata.name);
        return names.length === 1 && names;
      },
      { what: `one request left for ${name}`, timeoutMs: CERTIFICATE_WAIT_MS },
    );
    t.same(requests, [`${name}-2`], 'revisionHistoryLimit 1 keeps only the latest request');
  }
  const reused = stack.events.eventsFor('Certificate', 'rotate-never', NS).map((e) => e.reason);
  t.ok(reused.includes('Reused'), 'Never announces the reused key');
});

t.test('a new DNS name re-issues with the reason of the trigger chain', async (t) => {
  const stack = await startCertificateStack(t);
  await createCaClusterIssuer(stack.store);
  await stack.store.create(
    CertificateKind,
    certificateObject(NS, 'grow', { dnsNames: ['a.example'], privateKey: { algorithm: 'ECDSA' } }),
  );
  await stack.ready(NS, 'grow', 1);
  await updateCertificate(stack.store, NS, 'grow', (current) => ({
    ...current,
    spec: { ...current.spec, dnsNames: ['a.example', 'b.example'] },
  }));
  await stack.ready(NS, 'grow', 2);
  const leaf = new X509Certificate(secretText(await stack.secret(NS, 'grow-tls'), 'tls.crt'));
  t.equal(leaf.subjectAltName, 'DNS:a.example, DNS:b.example');
  const issuing = stack.events
    .eventsFor('Certificate', 'grow', NS)
    .filter((e) => e.reason === 'Issuing')
    .map((e) => e.message);
  t.same(issuing, [
    'Issuing certificate as Secret does not exist',
    'The certificate has been successfully issued',
    'Fields on existing CertificateRequest resource not up to date: [spec.dnsNames]',
    'The certificate has been successfully issued',
  ]);
});

t.test(
  'between issuances the Secret gets back what it lost, and a secretTemplate change, without re-issuing',
  async (t) => {
    const stack = await startCertificateStack(t);
    await createCaClusterIssuer(stack.store);
    await stack.store.create(
      CertificateKind,
      certificateObject(NS, 'kept', {
        dnsNames: ['kept.example'],
        privateKey: { algorithm: 'ECDSA' },
        additionalOutputFormats: [{ type: 'CombinedPEM' }],
        secretTemplate: { labels: { team: 'a' } },
      }),
    );
    await stack.ready(NS, 'kept', 1);
    const issued = await stack.secret(NS, 'kept-tls');
    const { 'tls-combined.pem': _combined, ...data } = issued.data ?? {};
    await stack.store.update(SecretKind, {
      ...issued,
      metadata: { ...issued.metadata, labels: { unrelated: 'x' } },
      data: { ...data, 'user-file': Buffer.from('mine').toString('base64') },
    });
    const restored = await waitForObject<Secret>(
      stack.store,
      SecretKind,
      'kept-tls',
      NS,
      (s) => s.data?.['tls-combined.pem'] !== undefined && s.metadata.labels?.team === 'a',
      CERTIFICATE_WAIT_MS,
    );
    t.equal(restored.data?.['tls-combined.pem'], issued.data?.['tls-combined.pem']);
    t.equal(restored.data?.['tls.key'], issued.data?.['tls.key'], 'the same key: no re-issuance');
    t.equal(
      restored.data?.['user-file'],
      Buffer.from('mine').toString('base64'),
      'a key of the user stays',
    );
    t.equal(restored.metadata.labels?.unrelated, 'x', 'a label of the user stays');

    await updateCertificate(stack.store, NS, 'kept', (current) => ({
      ...current,
      spec: { ...current.spec, secretTemplate: { labels: { team: 'b' } } },
    }));
    const relabelled = await waitForObject<Secret>(
      stack.store,
      SecretKind,
      'kept-tls',
      NS,
      (s) => s.metadata.labels?.team === 'b',
      CERTIFICATE_WAIT_MS,
    );
    t.equal(relabelled.data?.['tls.crt'], issued.data?.['tls.crt'], 'the same certificate');
    const current = await stack.store.get<Certificate>(CertificateKind, 'kept', NS);
    t.equal(current.status?.revision, 1, 'still revision 1');
  },
);
