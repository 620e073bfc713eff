import { X509Certificate } from 'node:crypto';
import t from 'tap';
import type { CertificateRequest } from '../../src/api/certificate-request.js';
import type { Issuer } from '../../src/api/issuer.js';
import { PRIVATE_KEY_SECRET_NAME_ANNOTATION } from '../../src/api/labels.js';
import type { Secret } from '../../src/api/secret.js';
import { MemoryEventRecorder } from '../../src/controller/memory-event-recorder.js';
import { EMPTY_ISSUER_DN_WARNING } from '../../src/issuer/certificaterequests/request-outcome.js';
import { signSelfSigned as coreSignSelfSigned } from '../../src/issuer/self-signed-issuer.js';
import {
  certificateRequest,
  issuer,
  tlsSecret,
  withAnnotations,
  withCsr,
  withNamespace,
  withSpec,
} from '../support/builders/index.js';
import { keyAndCsr, opensslText } from '../support/issuer-fixtures.js';
import { type RequestSigningContext, signAsRequest } from '../support/request-signing.js';

const selfSigned = issuer(
  'self',
  withNamespace('ns'),
  withSpec({
    selfSigned: { crlDistributionPoints: ['http://crl.example.com/x.crl'] },
  }),
);

// The SelfSigned issuer as a CertificateRequest sees it: cert-manager's reasons and messages.
const signSelfSigned = (
  request: CertificateRequest,
  issuer: Issuer,
  context: RequestSigningContext,
) => signAsRequest(coreSignSelfSigned, 'selfSigned', request, issuer, context);

function context(secrets: Secret[], events = new MemoryEventRecorder()): RequestSigningContext {
  return {
    secret: (namespace, name) =>
      secrets.find((s) => s.metadata.namespace === namespace && s.metadata.name === name),
    resourceNamespace: () => 'kube-system',
    events,
    now: new Date(),
  };
}

function withKeySecret(
  csrPem: string,
  spec: Partial<CertificateRequest['spec']> = {},
): CertificateRequest {
  return certificateRequest(
    'r',
    withNamespace('ns'),
    withSpec({ issuerRef: { name: 'self' }, ...spec }),
    withCsr(csrPem),
    withAnnotations({ [PRIVATE_KEY_SECRET_NAME_ANNOTATION]: 'key' }),
  );
}

t.test(
  'an undecodable key secret is Pending ErrorParsingKey, without echoing the data',
  async (t) => {
    const { csrPem } = await keyAndCsr({ algorithm: 'ECDSA', size: 256 });
    const outcome = await signSelfSigned(
      withKeySecret(csrPem),
      selfSigned,
      context([
        tlsSecret('ns', 'key', {
          'tls.key': '-----BEGIN PRIVATE KEY-----\nc2VjcmV0\n-----END PRIVATE KEY-----\n',
        }),
      ]),
    );
    t.equal(outcome.outcome, 'pending');
    if (outcome.outcome !== 'pending') return;
    t.equal(outcome.reason, 'ErrorParsingKey');
    t.match(
      outcome.message,
      /^Failed to get key "ns\/key" referenced in annotation "cert-manager.io\/private-key-secret-name": /,
    );
    t.notMatch(outcome.message, /c2VjcmV0|BEGIN/);
  },
);

t.test('an unparsable CSR or an unknown usage is a final ErrorGenerating', async (t) => {
  const { keyPem, csrPem } = await keyAndCsr({ algorithm: 'ECDSA', size: 256 });
  const secrets = [tlsSecret('ns', 'key', { 'tls.key': keyPem })];
  const garbage = await signSelfSigned(withKeySecret('not a csr'), selfSigned, context(secrets));
  t.equal(garbage.outcome, 'failed');
  t.equal(garbage.outcome === 'failed' && garbage.reason, 'ErrorGenerating');
  const usage = await signSelfSigned(
    withKeySecret(csrPem, { usages: ['server auth', 'telepathy'] }),
    selfSigned,
    context(secrets),
  );
  t.same(usage, {
    outcome: 'failed',
    reason: 'ErrorGenerating',
    message: 'Error generating certificate template: unknown key usages: "telepathy"',
  });
});

t.test('an empty subject is signed with a BadConfig warning and a critical SAN', async (t) => {
  const { keyPem, csrPem } = await keyAndCsr(
    { algorithm: 'Ed25519' },
    { dnsNames: ['only-san.example.com'] },
  );
  const events = new MemoryEventRecorder();
  const outcome = await signSelfSigned(
    withKeySecret(csrPem, { duration: '2h' }),
    selfSigned,
    context([tlsSecret('ns', 'key', { 'tls.key': keyPem })], events),
  );
  t.equal(outcome.outcome, 'issued');
  if (outcome.outcome !== 'issued') return;
  t.same(
    events.all().map((e) => [e.type, e.reason, e.message]),
    [['Warning', 'BadConfig', EMPTY_ISSUER_DN_WARNING]],
  );
  const cert = new X509Certificate(outcome.certificatePem);
  t.equal(cert.subjectAltName, 'DNS:only-san.example.com');
  t.equal(outcome.caPem, outcome.certificatePem);
  const text = await opensslText(outcome.certificatePem);
  t.match(text, /X509v3 Subject Alternative Name: critical/);
  t.match(
    text,
    /X509v3 CRL Distribution Points:\s+Full Name:\s+URI:http:\/\/crl\.example\.com\/x\.crl/,
  );
});
