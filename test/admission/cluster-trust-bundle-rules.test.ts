import t from 'tap';
import {
  clusterTrustBundleAttestSigner,
  validateClusterTrustBundle,
  validateClusterTrustBundleUpdate,
} from '../../src/admission/cluster-trust-bundle-rules.js';
import type { ClusterTrustBundle } from '../../src/api/cluster-trust-bundle.js';
import { encodePem } from '../../src/pki/pem.js';
import {
  issueLeaf,
  makeSigner,
  newKey,
  SIGNER_NAME,
  trustBundle,
} from '../support/pod-certificate-fixtures.js';
import { toCryptoKeyPair, x509 } from '../support/x509-provider.js';

const SUBDOMAIN_REGEX =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const TB = 'spec.trustBundle: Invalid value: "<value omitted>"';
const LINKED = 'example.com:spiffe:primary';

const root = await makeSigner('root one');
const root2 = await makeSigner('root two');
const ca = root.certificatePem;
const ca2 = root2.certificatePem;
const leaf = await issueLeaf(root, await newKey());

/** A self-signed certificate without a basic constraints extension (an X.509 v1 style root). */
async function withoutBasicConstraints(): Promise<string> {
  const key = await newKey();
  const keys = await toCryptoKeyPair(key, { name: 'ECDSA', hash: 'SHA-256' });
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'CN=no constraints',
    notBefore: new Date(),
    notAfter: new Date(Date.now() + 3_600_000),
    keys,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    extensions: [],
  });
  return encodePem('CERTIFICATE', new Uint8Array(cert.rawData));
}

t.test('valid bundles', async (t) => {
  t.same(validateClusterTrustBundle(trustBundle('roots', ca)), [], 'unlinked');
  t.same(validateClusterTrustBundle(trustBundle(LINKED, ca + ca2, SIGNER_NAME)), [], 'linked');
  t.same(
    validateClusterTrustBundle(trustBundle('roots', `a comment\n${ca}between\n${ca2}after`)),
    [],
    'text around blocks is ignored',
  );
  const generated = trustBundle('', ca);
  generated.metadata = { name: '', generateName: 'roots-' };
  t.same(validateClusterTrustBundle(generated), [], 'a generateName prefix may end in -');
});

t.test('names: signer-linked prefix, no ":" when unlinked', async (t) => {
  const cases: Array<[string, ClusterTrustBundle, string[]]> = [
    [
      'a linked bundle without the prefix',
      trustBundle('primary', ca, SIGNER_NAME),
      [
        'metadata.name: Invalid value: "primary": ClusterTrustBundle for signerName example.com/spiffe must be named with prefix example.com:spiffe:',
      ],
    ],
    [
      'a linked bundle with a bad suffix',
      trustBundle('example.com:spiffe:Primary', ca, SIGNER_NAME),
      [`metadata.name: Invalid value: "example.com:spiffe:Primary": ${SUBDOMAIN_REGEX}`],
    ],
    [
      'an unlinked bundle with a ":"',
      trustBundle(LINKED, ca),
      [
        'metadata.name: Invalid value: "example.com:spiffe:primary": ClusterTrustBundle without signer name must not have ":" in its name',
      ],
    ],
    [
      'an unlinked bundle with a bad name',
      trustBundle('Roots', ca),
      [`metadata.name: Invalid value: "Roots": ${SUBDOMAIN_REGEX}`],
    ],
    [
      'no name at all',
      trustBundle('', ca),
      ['metadata.name: Required value: name or generateName is required'],
    ],
    [
      'a bad signer name',
      trustBundle('example:x', ca, 'example'),
      [
        `spec.signerName: Invalid value: "example": must be a fully qualified domain and path of the form 'example.com/signer-name'`,
      ],
    ],
  ];
  for (const [name, bundle, want] of cases) {
    t.same(validateClusterTrustBundle(bundle), want, name);
  }
  const generated = trustBundle('', ca, SIGNER_NAME);
  generated.metadata = { name: '', generateName: 'Primary-' };
  t.same(validateClusterTrustBundle(generated), [
    'metadata.generateName: Invalid value: "Primary-": ClusterTrustBundle for signerName example.com/spiffe must be named with prefix example.com:spiffe:',
  ]);
});

t.test('the trust bundle', async (t) => {
  const key = encodePem('PRIVATE KEY', new Uint8Array(16));
  const withHeaders = ca.replace('-----\n', '-----\nProc-Type: 4,ENCRYPTED\n\n');
  const junk = encodePem('CERTIFICATE', new Uint8Array([0x30, 0x03, 0x02, 0x01, 0x01]));
  const v1 = await withoutBasicConstraints();
  const cases: Array<[string, string, string[]]> = [
    [
      'over 1 MiB',
      ca + 'x'.repeat(1024 * 1024),
      ['spec.trustBundle: Too long: may not be more than 1048576 bytes'],
    ],
    ['empty', '', [`${TB}: at least one trust anchor must be provided`]],
    ['no PEM at all', 'not a certificate', [`${TB}: at least one trust anchor must be provided`]],
    ['a private key', ca + key, [`${TB}: entry 1 has bad block type: PRIVATE KEY`]],
    ['PEM headers', withHeaders, [`${TB}: entry 0 has PEM block headers`]],
    ['a block that is no certificate', junk, [`${TB}: entry 0 does not parse as X.509`]],
    ['a leaf', leaf, [`${TB}: entry 0 does not have the CA bit set`]],
    ['no basic constraints', v1, [`${TB}: entry 0 does not have the CA bit set`]],
    ['a duplicate', ca + ca2 + ca, [`${TB}: duplicate trust anchor (indices [0 2])`]],
    [
      'every bad entry, and no duplicate complaint then',
      key + ca + leaf + ca,
      [
        `${TB}: entry 0 has bad block type: PRIVATE KEY`,
        `${TB}: entry 2 does not have the CA bit set`,
      ],
    ],
  ];
  for (const [name, trust, want] of cases) {
    t.same(validateClusterTrustBundle(trustBundle('roots', trust)), want, name);
  }
  const specless = {
    ...trustBundle('roots', ''),
    spec: undefined,
  } as unknown as ClusterTrustBundle;
  t.same(
    validateClusterTrustBundle(specless),
    [`${TB}: at least one trust anchor must be provided`],
    'no spec',
  );
});

t.test('update: signerName is immutable; an unchanged bundle is not parsed again', async (t) => {
  const old = trustBundle(LINKED, ca, SIGNER_NAME);
  t.same(validateClusterTrustBundleUpdate(trustBundle(LINKED, ca + ca2, SIGNER_NAME), old), []);
  t.same(validateClusterTrustBundleUpdate(trustBundle(LINKED, ca, 'example.com/other'), old), [
    'metadata.name: Invalid value: "example.com:spiffe:primary": ClusterTrustBundle for signerName example.com/other must be named with prefix example.com:other:',
    'spec.signerName: Invalid value: "example.com/other": field is immutable',
  ]);
  t.same(
    validateClusterTrustBundleUpdate(trustBundle(LINKED, ca), old),
    [
      'metadata.name: Invalid value: "example.com:spiffe:primary": ClusterTrustBundle without signer name must not have ":" in its name',
      'spec.signerName: Invalid value: "": field is immutable',
    ],
    'unlinking is a change too',
  );
  const stale = trustBundle('roots', leaf);
  t.same(
    validateClusterTrustBundleUpdate(
      { ...stale, metadata: { name: 'roots', labels: { a: 'b' } } },
      stale,
    ),
    [],
    'a bundle stored before a stricter rule can still be relabelled',
  );
  t.same(validateClusterTrustBundleUpdate(trustBundle('roots', leaf + ca), stale), [
    `${TB}: entry 0 does not have the CA bit set`,
  ]);
});

t.test('attest: linked bundles, except garbage-collection updates', async (t) => {
  const linked = trustBundle(LINKED, ca, SIGNER_NAME);
  t.equal(clusterTrustBundleAttestSigner(trustBundle('roots', ca), undefined), undefined);
  t.equal(clusterTrustBundleAttestSigner(linked, undefined), SIGNER_NAME, 'create');
  t.equal(
    clusterTrustBundleAttestSigner(trustBundle(LINKED, ca + ca2, SIGNER_NAME), linked),
    SIGNER_NAME,
    'a new trust bundle',
  );
  t.equal(
    clusterTrustBundleAttestSigner(
      { ...linked, metadata: { ...linked.metadata, labels: { canary: 'live' } } },
      linked,
    ),
    SIGNER_NAME,
    'labels are part of what a bundle says',
  );
  const stored = { ...linked, metadata: { ...linked.metadata, resourceVersion: '7' } };
  const collected = {
    ...linked,
    metadata: {
      ...linked.metadata,
      resourceVersion: '8',
      ownerReferences: [{ apiVersion: 'v1', kind: 'Namespace', name: 'x', uid: 'u' }],
      finalizers: ['example.com/keep'],
    },
  } as ClusterTrustBundle;
  t.equal(
    clusterTrustBundleAttestSigner(collected, stored),
    undefined,
    'owners and finalizers only',
  );
});

t.test('a bundle of hundreds of bad entries: ten errors and a count', async (t) => {
  const bad = encodePem('PRIVATE KEY', Buffer.from('not a key'));
  const errors = validateClusterTrustBundle(trustBundle('roots', ca + bad.repeat(300)));
  t.equal(errors.length, 11);
  t.equal(errors[0], `${TB}: entry 1 has bad block type: PRIVATE KEY`);
  t.equal(errors[10], 'spec.trustBundle: and 290 more errors (only the first 10 are listed)');
  const duplicates = validateClusterTrustBundle(trustBundle('roots', ca.repeat(3) + ca2 + ca2));
  t.same(duplicates, [
    `${TB}: duplicate trust anchor (indices [0 1 2])`,
    `${TB}: duplicate trust anchor (indices [3 4])`,
  ]);
});
