import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { CertificateKind } from '../../src/api/certificate.js';
import {
  type CertificateRequest,
  CertificateRequestKind,
} from '../../src/api/certificate-request.js';
import { ClusterIssuerKind, IssuerKind } from '../../src/api/issuer.js';
import { clusterIssuer, issuer, withNamespace, withSpec } from '../support/builders/index.js';
import {
  certificateObject,
  createCaClusterIssuer,
  secretText,
  startCertificateStack,
  updateCertificate,
} from '../support/certificate-stack.js';
import { opensslText, opensslVerify, run, withTempDir } from '../support/issuer-fixtures.js';

// Certificates with otherNames, nameConstraints and signatureAlgorithm, issued through the
// whole embedded stack and read back with openssl.

const NS = 'apps';
const UPN = '1.3.6.1.4.1.311.20.2.3';

/** `openssl req -text` of the CSR of a Certificate's revision. */
async function requestText(
  stack: Awaited<ReturnType<typeof startCertificateStack>>,
  name: string,
  revision: number,
): Promise<string> {
  const request = await stack.store.get<CertificateRequest>(
    CertificateRequestKind,
    `${name}-${revision}`,
    NS,
  );
  const pem = Buffer.from(request.spec.request, 'base64').toString();
  return withTempDir(async (dir) => {
    const file = join(dir, 'csr.pem');
    await writeFile(file, pem);
    // openssl prints its verdict on the signature to stderr.
    const { stdout, stderr } = await run('openssl', [
      'req',
      '-in',
      file,
      '-noout',
      '-text',
      '-verify',
    ]);
    return `${stdout}${stderr}`;
  });
}

/** openssl verify's verdict, failures included (it exits non-zero then). */
async function verdict(caPem: string, chainPem: string): Promise<string> {
  try {
    return await opensslVerify(caPem, chainPem);
  } catch (err) {
    const { stdout = '', stderr = '' } = err as { stdout?: string; stderr?: string };
    return `${stdout}${stderr}`;
  }
}

t.test(
  'a name-constrained CA from a SelfSigned issuer signs leaves with otherNames; openssl enforces the constraints',
  async (t) => {
    const stack = await startCertificateStack(t);
    await stack.store.create(
      ClusterIssuerKind,
      clusterIssuer('root', withSpec({ selfSigned: {} })),
    );
    await stack.store.create(
      CertificateKind,
      certificateObject(NS, 'root-ca', {
        commonName: 'constrained root',
        isCA: true,
        issuerRef: { name: 'root', kind: 'ClusterIssuer' },
        privateKey: { algorithm: 'RSA', size: 2048 },
        signatureAlgorithm: 'SHA512WithRSA',
        nameConstraints: {
          critical: true,
          permitted: { dnsDomains: ['.example.com'], ipRanges: ['10.0.0.0/8'] },
          excluded: { dnsDomains: ['bad.example.com'], emailAddresses: ['ops@example.com'] },
        },
      }),
    );
    await stack.ready(NS, 'root-ca', 1);
    const rootPem = secretText(await stack.secret(NS, 'root-ca-tls'), 'tls.crt');

    const rootRequest = await requestText(stack, 'root-ca', 1);
    t.match(rootRequest, /verify OK/);
    t.match(
      rootRequest,
      /Signature Algorithm: sha512WithRSAEncryption/,
      'the CSR: the spec’s algorithm',
    );
    t.match(rootRequest, /X509v3 Name Constraints: critical/);

    const root = await opensslText(rootPem);
    t.match(
      root,
      /X509v3 Name Constraints: critical\s+Permitted:\s+DNS:\.example\.com\s+IP:10\.0\.0\.0\/255\.0\.0\.0\s+Excluded:\s+DNS:bad\.example\.com\s+email:ops@example\.com/,
      'the certificate carries the constraints, critical',
    );
    t.match(
      root,
      /Signature Algorithm: sha256WithRSAEncryption/,
      'the certificate: the signer key’s algorithm, as cert-manager’s SelfSigned issuer does',
    );
    t.match(root, /CA:TRUE/);

    await stack.store.create(
      IssuerKind,
      issuer('constrained', withNamespace(NS), withSpec({ ca: { secretName: 'root-ca-tls' } })),
    );
    await stack.store.create(
      CertificateKind,
      certificateObject(NS, 'inside', {
        dnsNames: ['api.example.com'],
        otherNames: [
          { oid: UPN, utf8Value: 'svc@example.com' },
          { oid: '1.2.3.4', utf8Value: 'ünïcode' },
        ],
        issuerRef: { name: 'constrained', kind: 'Issuer' },
        privateKey: { algorithm: 'ECDSA', size: 256 },
        signatureAlgorithm: 'ECDSAWithSHA384',
      }),
    );
    await stack.store.create(
      CertificateKind,
      certificateObject(NS, 'outside', {
        dnsNames: ['api.other.org'],
        issuerRef: { name: 'constrained', kind: 'Issuer' },
        privateKey: { algorithm: 'ECDSA', size: 256 },
      }),
    );
    await Promise.all([stack.ready(NS, 'inside', 1), stack.ready(NS, 'outside', 1)]);

    const insideRequest = await requestText(stack, 'inside', 1);
    t.match(insideRequest, /verify OK/);
    t.match(
      insideRequest,
      /Signature Algorithm: ecdsa-with-SHA384/,
      'the leaf CSR: ECDSAWithSHA384',
    );
    t.match(
      insideRequest,
      /DNS:api\.example\.com, othername: UPN::svc@example\.com, othername: 1\.2\.3\.4::ünïcode/,
    );
    const insidePem = secretText(await stack.secret(NS, 'inside-tls'), 'tls.crt');
    const inside = await opensslText(insidePem);
    t.match(
      inside,
      /X509v3 Subject Alternative Name: critical\s+DNS:api\.example\.com, othername: UPN::svc@example\.com, othername: 1\.2\.3\.4::ünïcode/,
      'the CA issuer copies the otherNames (critical: the subject is empty)',
    );
    t.match(
      inside,
      /Signature Algorithm: sha256WithRSAEncryption/,
      'signed with the CA key’s algorithm',
    );
    t.match(
      await verdict(rootPem, insidePem),
      /: OK/,
      'a name inside the permitted subtree verifies',
    );

    const outsidePem = secretText(await stack.secret(NS, 'outside-tls'), 'tls.crt');
    t.match(
      await verdict(rootPem, outsidePem),
      /permitted subtree violation/,
      'a name outside it does not: the constraint is in force',
    );
  },
);

t.test('a changed otherNames list issues a new certificate', async (t) => {
  const stack = await startCertificateStack(t);
  await createCaClusterIssuer(stack.store);
  await stack.store.create(
    CertificateKind,
    certificateObject(NS, 'upn', {
      commonName: 'upn',
      otherNames: [{ oid: UPN, utf8Value: 'first@example.com' }],
      privateKey: { algorithm: 'ECDSA', size: 256 },
    }),
  );
  await stack.ready(NS, 'upn', 1);
  t.match(
    await opensslText(secretText(await stack.secret(NS, 'upn-tls'), 'tls.crt')),
    /othername: UPN::first@example\.com/,
  );
  await updateCertificate(stack.store, NS, 'upn', (current) => ({
    ...current,
    spec: { ...current.spec, otherNames: [{ oid: UPN, utf8Value: 'second@example.com' }] },
  }));
  await stack.ready(NS, 'upn', 2);
  const second = await opensslText(secretText(await stack.secret(NS, 'upn-tls'), 'tls.crt'));
  t.match(second, /othername: UPN::second@example\.com/, 'revision 2 carries the new value');
  t.notMatch(second, /first@example\.com/);
});
