import { X509Certificate } from 'node:crypto';
import t from 'tap';
import type { CertificateRequest } from '../../src/api/certificate-request.js';
import type { Issuer } from '../../src/api/issuer.js';
import type { Secret } from '../../src/api/secret.js';
import { MemoryEventRecorder } from '../../src/controller/memory-event-recorder.js';
import {
  signWithCA as coreSignWithCA,
  createCASigner as createCoreSigner,
} from '../../src/issuer/ca-issuer.js';
import { signCertificate } from '../../src/pki/certificate.js';
import { createCsr, parseCsr } from '../../src/pki/csr.js';
import { decodePrivateKey, encodePrivateKey, generatePrivateKey } from '../../src/pki/keys.js';
import {
  certificateRequest,
  issuer,
  tlsSecret,
  withCsr,
  withNamespace,
  withSpec,
} from '../support/builders/index.js';
import { keyAndCsr, makeCA } from '../support/issuer-fixtures.js';
import { type RequestSigningContext, signAsRequest } from '../support/request-signing.js';

const caIssuer = issuer('ca', withNamespace('ns'), withSpec({ ca: { secretName: 'ca' } }));

// The CA issuer as a CertificateRequest sees it: cert-manager's reasons and messages.
const signWithCA = (request: CertificateRequest, issuer: Issuer, context: RequestSigningContext) =>
  signAsRequest((i, input, c) => coreSignWithCA(i, input, c), 'ca', request, issuer, context);

function createCASigner() {
  const signer = createCoreSigner();
  return (request: CertificateRequest, issuer: Issuer, context: RequestSigningContext) =>
    signAsRequest(signer, 'ca', request, issuer, context);
}

function context(secrets: Secret[]): RequestSigningContext {
  return {
    secret: (namespace, name) =>
      secrets.find((s) => s.metadata.namespace === namespace && s.metadata.name === name),
    resourceNamespace: (i: Issuer) => i.metadata.namespace ?? 'kube-system',
    events: new MemoryEventRecorder(),
    now: new Date(),
  };
}

/** A request in ns for the CA issuer over a fresh key's CSR, for duration when given. */
async function freshRequest(duration?: string): Promise<CertificateRequest> {
  const { csrPem } = await keyAndCsr({ algorithm: 'ECDSA', size: 256 });
  return certificateRequest(
    'r',
    withNamespace('ns'),
    withSpec({
      issuerRef: { name: 'ca' },
      ...(duration ? { duration } : {}),
    }),
    withCsr(csrPem),
  );
}

t.test('a missing CA secret is Pending SecretMissing naming namespace/name', async (t) => {
  const outcome = await signWithCA(await freshRequest(), caIssuer, context([]));
  t.same(outcome, {
    outcome: 'pending',
    reason: 'SecretMissing',
    message: 'Referenced secret ns/ca not found: secrets "ca" not found',
  });
});

t.test('an unparsable CA secret is Pending SecretInvalidData', async (t) => {
  const ca = await makeCA();
  const other = await makeCA();
  const cases: Array<[string, Record<string, string>, RegExp]> = [
    ['no tls.crt', { 'tls.key': ca.keyPem }, /secret has no "tls.crt"/],
    ['no tls.key', { 'tls.crt': ca.certificatePem }, /secret has no "tls.key"/],
    [
      'junk certificate',
      { 'tls.crt': 'junk', 'tls.key': ca.keyPem },
      /holds no certificate|certificate/,
    ],
    ['junk key', { 'tls.crt': ca.certificatePem, 'tls.key': 'junk' }, /private key/],
    [
      'key of another CA',
      { 'tls.crt': ca.certificatePem, 'tls.key': other.keyPem },
      /private key does not match certificate/,
    ],
  ];
  for (const [name, data, cause] of cases) {
    const outcome = await signWithCA(
      await freshRequest(),
      caIssuer,
      context([tlsSecret('ns', 'ca', data)]),
    );
    t.equal(outcome.outcome, 'pending', name);
    if (outcome.outcome !== 'pending') continue;
    t.equal(outcome.reason, 'SecretInvalidData', name);
    t.match(outcome.message, /^Failed to parse signing CA keypair from secret ns\/ca: /, name);
    t.match(outcome.message, cause, name);
    t.notMatch(outcome.message, /PRIVATE KEY/, `${name}: no key material in the message`);
  }
});

t.test('a zero or malformed duration is a final SigningError', async (t) => {
  const ca = await makeCA();
  const secrets = [tlsSecret('ns', 'ca', { 'tls.crt': ca.certificatePem, 'tls.key': ca.keyPem })];
  for (const duration of ['0s', '-1h', '1d']) {
    const outcome = await signWithCA(await freshRequest(duration), caIssuer, context(secrets));
    t.equal(outcome.outcome, 'failed', duration);
    if (outcome.outcome === 'failed') {
      t.equal(outcome.reason, 'SigningError');
      t.match(outcome.message, /^Error generating certificate template: /);
    }
  }
});

t.test('ca.crt from the secret becomes the CA of an intermediate-signed chain', async (t) => {
  const root = await makeCA();
  // The signer is an intermediate issued by root; status.ca must be the root.
  const intermediateKey = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
  const intermediateCsr = await parseCsr(
    await createCsr({ key: intermediateKey, subject: { commonName: 'intermediate' } }),
  );
  const intermediatePem = await signCertificate(
    intermediateCsr,
    { durationMs: 3600_000 * 24, isCA: true, usages: [] },
    { certificatePem: root.certificatePem, key: decodePrivateKey(root.keyPem) },
  );
  const secrets = [
    tlsSecret('ns', 'ca', {
      'tls.crt': intermediatePem,
      'tls.key': encodePrivateKey(intermediateKey, 'PKCS8'),
      'ca.crt': root.certificatePem,
    }),
  ];
  const outcome = await signWithCA(await freshRequest('1h'), caIssuer, context(secrets));
  t.equal(outcome.outcome, 'issued');
  if (outcome.outcome !== 'issued') return;
  t.equal(outcome.caPem.trim(), root.certificatePem.trim(), 'ca.crt is the top-most certificate');
  t.equal(
    (outcome.certificatePem.match(/BEGIN CERTIFICATE/g) ?? []).length,
    2,
    'leaf + intermediate',
  );
  t.notOk(
    outcome.certificatePem.includes(root.certificatePem.trim()),
    'the root is not in the chain',
  );
});

t.test('a self-signed CA whose ca.crt repeats tls.crt issues leaf-only chains', async (t) => {
  const root = await makeCA();
  const secrets = [
    tlsSecret('ns', 'ca', {
      'tls.crt': root.certificatePem,
      'tls.key': root.keyPem,
      'ca.crt': root.certificatePem,
    }),
  ];
  const outcome = await signWithCA(await freshRequest('1h'), caIssuer, context(secrets));
  t.equal(outcome.outcome, 'issued');
  if (outcome.outcome !== 'issued') return;
  t.equal(outcome.caPem.trim(), root.certificatePem.trim(), 'ca.crt is the root');
  t.equal((outcome.certificatePem.match(/BEGIN CERTIFICATE/g) ?? []).length, 1, 'leaf only');
  const leaf = new X509Certificate(outcome.certificatePem);
  t.ok(leaf.verify(new X509Certificate(root.certificatePem).publicKey), 'signed by the root');
});

t.test('the CA signer caches a Secret per resourceVersion and rereads a changed one', async (t) => {
  const first = await makeCA();
  const second = await makeCA({ algorithm: 'Ed25519' });
  const sign = createCASigner();
  const withVersion = (ca: typeof first, resourceVersion: string) => {
    const secret = tlsSecret('ns', 'ca', { 'tls.crt': ca.certificatePem, 'tls.key': ca.keyPem });
    secret.metadata.uid = 'uid-1';
    secret.metadata.resourceVersion = resourceVersion;
    return secret;
  };
  const issuerOf = async (secret: Secret) => {
    const outcome = await sign(await freshRequest('1h'), caIssuer, context([secret]));
    if (outcome.outcome !== 'issued') throw new Error(`not issued: ${JSON.stringify(outcome)}`);
    return new X509Certificate(outcome.certificatePem).issuer;
  };
  const firstSubject = new X509Certificate(first.certificatePem).subject;
  t.equal(await issuerOf(withVersion(first, '1')), firstSubject);
  t.equal(await issuerOf(withVersion(first, '1')), firstSubject, 'cached');
  const rotated = withVersion(second, '2');
  const outcome = await sign(await freshRequest('1h'), caIssuer, context([rotated]));
  t.equal(outcome.outcome, 'issued');
  if (outcome.outcome === 'issued') {
    t.equal(outcome.caPem.trim(), second.certificatePem.trim(), 'the rotated CA signs');
  }
  const broken = withVersion(first, '3');
  broken.data = { 'tls.crt': broken.data?.['tls.crt'] ?? '' };
  t.equal((await sign(await freshRequest(), caIssuer, context([broken]))).outcome, 'pending');
  t.equal(
    (await sign(await freshRequest(), caIssuer, context([broken]))).outcome,
    'pending',
    'a bad Secret is not cached',
  );
});
