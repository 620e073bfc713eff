import { generateKeyPair, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import t from 'tap';
import {
  podCertificateRequestStatusChanged,
  validatePodCertificateRequestCreate,
  validatePodCertificateRequestStatusUpdate,
  validatePodCertificateRequestUpdate,
  withPodCertificateRequestDefaults,
} from '../../src/admission/pod-certificate-request-rules.js';
import type { Condition } from '../../src/api/conditions.js';
import { formatTimestamp } from '../../src/api/conditions.js';
import type {
  PodCertificateRequest,
  PodCertificateRequestSpec,
  PodCertificateRequestStatus,
} from '../../src/api/pod-certificate-request.js';
import { goQuoteValue, goTimeString } from '../../src/base/go-text.js';
import { readTlv } from '../../src/pki/der.js';
import { spkiOf } from '../../src/pki/keys.js';
import { encodePem } from '../../src/pki/pem.js';
import { signPodUid } from '../../src/pki/pod-certificate-key.js';
import {
  issuedStatus,
  issueLeaf,
  keyFields,
  kubeletRequest,
  MINUTE_MS,
  makeSigner,
  newKey,
  podIdentity,
  refusedStatus,
  wholeSeconds,
} from '../support/pod-certificate-fixtures.js';

const generate = promisify(generateKeyPair);
const HOUR_MS = 60 * MINUTE_MS;
const SUBDOMAIN_REGEX =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_REGEX =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const QUALIFIED_REGEX =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const REASON_REGEX =
  "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')";
const RFC3339 = 'must be an RFC 3339 time, e.g. 2026-03-02T10:00:00Z';

// One set of keys for the whole file: RSA keys take a while on a busy machine.
const p256 = await newKey();
const other = await newKey();
const ed25519 = await newKey({ algorithm: 'Ed25519' });
const rsa3072 = await newKey({ algorithm: 'RSA', size: 3072 });
const rsa2048 = await newKey({ algorithm: 'RSA', size: 2048 });
const p224 = (await generate('ec', { namedCurve: 'secp224r1' })).publicKey;
const k256 = (await generate('ec', { namedCurve: 'secp256k1' })).publicKey;
const x25519 = (await generate('x25519')).publicKey;
const dsa = (await generate('dsa', { modulusLength: 1024, divisorLength: 160 })).publicKey;
const ed448 = (await generate('ed448')).publicKey;
const signer = await makeSigner();

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const spki = (key: KeyObject) => spkiOf(key).toString('base64');

async function created(spec: Partial<PodCertificateRequestSpec>, form: 'pkix' | 'stub' = 'pkix') {
  const request = await kubeletRequest(p256, form);
  return validatePodCertificateRequestCreate(
    withPodCertificateRequestDefaults({ ...request, spec: { ...request.spec, ...spec } }),
  );
}

/** A request with only the identity and the given key fields (no defaults). */
function bare(spec: Partial<PodCertificateRequestSpec>): PodCertificateRequest {
  return {
    apiVersion: 'certificates.k8s.io/v1beta1',
    kind: 'PodCertificateRequest',
    metadata: { name: 'req', namespace: 'shop' },
    spec: { ...podIdentity(), maxExpirationSeconds: 86_400, ...spec },
  };
}

t.test('defaulting: maxExpirationSeconds is 86400 unless set', async (t) => {
  const request = await kubeletRequest(p256, 'pkix');
  t.equal(withPodCertificateRequestDefaults(request).spec.maxExpirationSeconds, 86_400);
  t.equal(request.spec.maxExpirationSeconds, undefined, 'the input is not changed');
  const set = { ...request, spec: { ...request.spec, maxExpirationSeconds: 3600 } };
  t.equal(withPodCertificateRequestDefaults(set).spec.maxExpirationSeconds, 3600);
});

t.test(
  'create: kubelet requests of every supported key type are valid, in both forms',
  async (t) => {
    for (const [name, key] of [
      ['ECDSA P-256', p256],
      ['Ed25519', ed25519],
      ['RSA 3072 (PSS proof)', rsa3072],
    ] as const) {
      for (const form of ['pkix', 'stub'] as const) {
        const request = withPodCertificateRequestDefaults(await kubeletRequest(key, form));
        t.same(validatePodCertificateRequestCreate(request), [], `${name}, ${form}`);
      }
    }
    t.same(
      await created({ unverifiedUserAnnotations: { 'example.com/spiffe-eku': 'server,client' } }),
      [],
      'domain-prefixed user annotations',
    );
    t.same(await created({ maxExpirationSeconds: 7_862_400 }), [], '91 days is the most');
    t.same(await created({ maxExpirationSeconds: 3600 }), [], 'one hour is the least');
  },
);

t.test('create: signer names (ValidateSignerName)', async (t) => {
  const longDomain = `${'a'.repeat(63)}.`.repeat(4).slice(0, -1);
  const longPath = `${'b'.repeat(63)}.`.repeat(9).slice(0, -1);
  const cases: Array<[string, string[]]> = [
    ['', ['spec.signerName: Required value']],
    [
      'example.com',
      [
        `spec.signerName: Invalid value: "example.com": must be a fully qualified domain and path of the form 'example.com/signer-name'`,
      ],
    ],
    [
      'example.com/a/b',
      [
        `spec.signerName: Invalid value: "example.com/a/b": must be a fully qualified domain and path of the form 'example.com/signer-name'`,
      ],
    ],
    [
      'Example.com/spiffe',
      [`spec.signerName: Invalid value: "Example.com": validating label "Example": ${LABEL_REGEX}`],
    ],
    [
      'example/spiffe',
      [
        'spec.signerName: Invalid value: "example": should be a domain with at least two segments separated by dots',
      ],
    ],
    [
      'example.com/spiffe.Bad_Path',
      [
        `spec.signerName: Invalid value: "spiffe.Bad_Path": validating label "Bad_Path": ${SUBDOMAIN_REGEX}`,
      ],
    ],
    [`${longDomain}/x`, ['spec.signerName: Too long: may not be more than 253 bytes']],
    [
      `${'a'.repeat(64)}.com/x`,
      [
        `spec.signerName: Invalid value: "${'a'.repeat(64)}.com": validating label "${'a'.repeat(64)}": must be no more than 63 characters`,
      ],
    ],
    [`example.com/${longPath}`, ['spec.signerName: Too long: may not be more than 571 bytes']],
  ];
  for (const [signerName, want] of cases) {
    t.same(await created({ signerName }), want, signerName || '(empty)');
  }
});

t.test(
  'create: user annotations are annotation keys, domain-prefixed, 256 KiB in all',
  async (t) => {
    const path = 'spec.unverifiedUserAnnotations';
    const cases: Array<[Record<string, string>, string[]]> = [
      [
        { eku: 'server' },
        [`${path}: Invalid value: "eku": must be domain-prefixed (e.g. 'example.com/key')`],
      ],
      [
        { 'example.com/bad key': '' },
        [`${path}: Invalid value: "example.com/bad key": name part ${QUALIFIED_REGEX}`],
      ],
      [{ '/eku': '' }, [`${path}: Invalid value: "/eku": prefix part must be non-empty`]],
      [{ 'Example.COM/Eku': 'upper case keys are checked lower-cased' }, []],
      [
        { 'a/b/c': '' },
        [
          `${path}: Invalid value: "a/b/c": a qualified name ${QUALIFIED_REGEX} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
        ],
      ],
      [
        { [`example.com/${'n'.repeat(64)}`]: '' },
        [
          `${path}: Invalid value: "example.com/${'n'.repeat(64)}": name part must be no more than 63 characters`,
        ],
      ],
      [
        { 'example.com/big': 'x'.repeat(256 * 1024) },
        [`${path}: Too long: may not be more than 262144 bytes`],
      ],
    ];
    for (const [annotations, want] of cases) {
      t.same(
        await created({ unverifiedUserAnnotations: annotations }),
        want,
        Object.keys(annotations).join(),
      );
    }
  },
);

t.test('create: the identity fields', async (t) => {
  const cases: Array<[Partial<PodCertificateRequestSpec>, string[]]> = [
    [{ podName: 'Api_0' }, [`spec.podName: Invalid value: "Api_0": ${SUBDOMAIN_REGEX}`]],
    [
      { podUID: '' },
      [
        'spec.podUID: Invalid value: "": must not be empty',
        // The proof signed the real pod UID, so it fails too.
        'spec.proofOfPossession: Invalid value: could not verify proof-of-possession signature',
      ],
    ],
    [{ podUID: 'u'.repeat(129) }, ['spec.podUID: Too long: may not be more than 128 bytes']],
    [
      { serviceAccountName: '' },
      [`spec.serviceAccountName: Invalid value: "": ${SUBDOMAIN_REGEX}`],
    ],
    [{ serviceAccountUID: '' }, ['spec.serviceAccountUID: Invalid value: "": must not be empty']],
    [
      { nodeName: 'n'.repeat(254) },
      [
        `spec.nodeName: Invalid value: "${'n'.repeat(100)}"…(254 characters): must be no more than 253 characters`,
      ],
    ],
    [{ nodeUID: 'u'.repeat(129) }, ['spec.nodeUID: Too long: may not be more than 128 bytes']],
  ];
  for (const [spec, want] of cases) {
    // The proof signs the pod UID: sign the one under test so only the identity rule speaks.
    const proof = spec.podUID ? { proofOfPossession: b64(signPodUid(p256, spec.podUID)) } : {};
    t.same(await created({ ...spec, ...proof }), want, Object.keys(spec).join());
  }
});

t.test(
  'create: maxExpirationSeconds must be set and in range; kubernetes.io signers get 24 h',
  async (t) => {
    const request = await kubeletRequest(p256, 'pkix', { podName: 'Bad_Name' });
    t.same(
      validatePodCertificateRequestCreate(request),
      [
        `spec.podName: Invalid value: "Bad_Name": ${SUBDOMAIN_REGEX}`,
        'spec.maxExpirationSeconds: Required value: must be set',
      ],
      'not defaulted: required, and the key is not looked at',
    );
    const range = 'must be in the range [3600, 7862400]';
    t.same(await created({ maxExpirationSeconds: 3599 }), [
      `spec.maxExpirationSeconds: Invalid value: 3599: ${range}`,
    ]);
    t.same(await created({ maxExpirationSeconds: 7_862_401 }), [
      `spec.maxExpirationSeconds: Invalid value: 7862401: ${range}`,
    ]);
    t.same(await created({ maxExpirationSeconds: 3600.5 }), [
      `spec.maxExpirationSeconds: Invalid value: 3600.5: ${range}`,
    ]);
    t.same(
      await created({ maxExpirationSeconds: '3600' as unknown as number }),
      [`spec.maxExpirationSeconds: Invalid value: "\\"3600\\"": ${range}`],
      'a string is no number',
    );
    for (const signerName of ['kubernetes.io/kube-apiserver-client-pod', 'x.kubernetes.io/y']) {
      t.same(await created({ signerName, maxExpirationSeconds: 86_401 }), [
        'spec.maxExpirationSeconds: Invalid value: 86401: must be in the range [3600, 86400]',
      ]);
      t.same(await created({ signerName, maxExpirationSeconds: 86_400 }), [], signerName);
    }
  },
);

t.test('create: a request with no spec at all is refused field by field', async (t) => {
  const empty = {
    apiVersion: 'certificates.k8s.io/v1beta1',
    kind: 'PodCertificateRequest',
    metadata: { name: 'x' },
  };
  t.same(validatePodCertificateRequestCreate(empty as PodCertificateRequest), [
    'spec.signerName: Required value',
    `spec.podName: Invalid value: "": ${SUBDOMAIN_REGEX}`,
    'spec.podUID: Invalid value: "": must not be empty',
    `spec.serviceAccountName: Invalid value: "": ${SUBDOMAIN_REGEX}`,
    'spec.serviceAccountUID: Invalid value: "": must not be empty',
    `spec.nodeName: Invalid value: "": ${SUBDOMAIN_REGEX}`,
    'spec.nodeUID: Invalid value: "": must not be empty',
    'spec.maxExpirationSeconds: Required value: must be set',
  ]);
  const defaulted = withPodCertificateRequestDefaults(empty as PodCertificateRequest);
  t.equal(defaulted.spec.maxExpirationSeconds, 86_400);
  const keyless = {
    ...defaulted,
    spec: { ...defaulted.spec, podUID: undefined },
  } as unknown as PodCertificateRequest;
  t.same(
    validatePodCertificateRequestCreate(keyless).at(-1),
    'spec.stubPKCS10Request: Required value: stubPKCS10Request, or pkixPublicKey with proofOfPossession, must be set',
  );
});

t.test('create: key material (exactly one encoding, sizes, key types, proofs)', async (t) => {
  const pkix = await keyFields(p256, 'pkix');
  const stub = await keyFields(p256, 'stub');
  const stubDer = Buffer.from(stub.stubPKCS10Request as string, 'base64');
  const tooLong = b64(new Uint8Array(10_241));
  // The CertificationRequestInfo's version INTEGER (tag 0x02) made an OCTET STRING: the key
  // is still where it was, but the request is no PKCS#10 any more.
  const info = readTlv(stubDer, readTlv(stubDer, 0).contentStart);
  const badVersion = Buffer.from(stubDer);
  badVersion[info.contentStart] = 0x04;
  const badSignature = Buffer.from(stubDer);
  badSignature[badSignature.length - 1] = (badSignature.at(-1) ?? 0) ^ 0xff;
  const rsaStub = await keyFields(rsa2048, 'stub');
  const otherPod = b64(signPodUid(p256, 'another-pod'));
  const nb64 = 'not base64!';
  const cases: Array<[string, Partial<PodCertificateRequestSpec>, string[]]> = [
    [
      'neither encoding',
      {},
      [
        'spec.stubPKCS10Request: Required value: stubPKCS10Request, or pkixPublicKey with proofOfPossession, must be set',
      ],
    ],
    [
      'both encodings',
      { ...pkix, ...stub },
      [
        'spec.pkixPublicKey: Forbidden: must be empty when stubPKCS10Request is set',
        'spec.proofOfPossession: Forbidden: must be empty when stubPKCS10Request is set',
      ],
    ],
    [
      'stub and a proof',
      { ...stub, proofOfPossession: pkix.proofOfPossession as string },
      ['spec.proofOfPossession: Forbidden: must be empty when stubPKCS10Request is set'],
    ],
    [
      'pkixPublicKey too long',
      { ...pkix, pkixPublicKey: tooLong },
      ['spec.pkixPublicKey: Too long: may not be more than 10240 bytes'],
    ],
    [
      'proofOfPossession too long',
      { ...pkix, proofOfPossession: tooLong },
      ['spec.proofOfPossession: Too long: may not be more than 10240 bytes'],
    ],
    [
      'stubPKCS10Request too long',
      { stubPKCS10Request: tooLong },
      ['spec.stubPKCS10Request: Too long: may not be more than 10240 bytes'],
    ],
    [
      'bytes that are no base64',
      { ...pkix, proofOfPossession: nb64 },
      [`spec.proofOfPossession: Invalid value: "${nb64}": must be base64-encoded bytes`],
    ],
    [
      'a key that is no SubjectPublicKeyInfo',
      { ...pkix, pkixPublicKey: 'AAAA' },
      ['spec.pkixPublicKey: Invalid value: "AAAA": must be a valid PKIX-serialized public key'],
    ],
    [
      'a proof without a key',
      { proofOfPossession: pkix.proofOfPossession as string },
      ['spec.pkixPublicKey: Invalid value: "": must be a valid PKIX-serialized public key'],
    ],
    [
      'a key without a proof',
      { pkixPublicKey: pkix.pkixPublicKey as string },
      ['spec.proofOfPossession: Invalid value: could not verify proof-of-possession signature'],
    ],
    [
      'a proof by another key',
      { ...pkix, pkixPublicKey: spki(other) },
      ['spec.proofOfPossession: Invalid value: could not verify proof-of-possession signature'],
    ],
    [
      'a proof over another pod UID',
      { ...pkix, proofOfPossession: otherPod },
      ['spec.proofOfPossession: Invalid value: could not verify proof-of-possession signature'],
    ],
    [
      'P-224',
      { ...pkix, pkixPublicKey: spki(p224) },
      [
        'spec.pkixPublicKey: Invalid value: "curve P-224": elliptic public keys must use curve P256 or P384',
      ],
    ],
    [
      'secp256k1, which Go cannot parse',
      { ...pkix, pkixPublicKey: spki(k256) },
      [
        `spec.pkixPublicKey: Invalid value: ${goQuoteValue(spki(k256))}: must be a valid PKIX-serialized public key`,
      ],
    ],
    [
      'RSA 2048',
      { ...pkix, pkixPublicKey: spki(rsa2048) },
      [
        'spec.pkixPublicKey: Invalid value: "2048-bit modulus": RSA keys must have modulus size 3072 or 4096',
      ],
    ],
    [
      'X25519',
      { ...pkix, pkixPublicKey: spki(x25519) },
      [
        `spec.pkixPublicKey: Invalid value: ${goQuoteValue(spki(x25519))}: unknown public key type; supported types are Ed25519, ECDSA, and RSA`,
      ],
    ],
    [
      'DSA',
      { ...pkix, pkixPublicKey: spki(dsa) },
      [
        `spec.pkixPublicKey: Invalid value: ${goQuoteValue(spki(dsa))}: unknown public key type; supported types are Ed25519, ECDSA, and RSA`,
      ],
    ],
    [
      'Ed448, which Go cannot parse',
      { ...pkix, pkixPublicKey: spki(ed448) },
      [
        `spec.pkixPublicKey: Invalid value: ${goQuoteValue(spki(ed448))}: must be a valid PKIX-serialized public key`,
      ],
    ],
    [
      'a stub that is no DER',
      { stubPKCS10Request: 'AAAA' },
      [
        'spec.stubPKCS10Request: Invalid value: "AAAA": must be a DER-encoded PKCS#10 certificate request',
      ],
    ],
    [
      'a stub whose info is malformed',
      { stubPKCS10Request: b64(badVersion) },
      [
        `spec.stubPKCS10Request: Invalid value: ${goQuoteValue(b64(badVersion))}: must be a DER-encoded PKCS#10 certificate request`,
      ],
    ],
    [
      'a stub with a broken signature',
      { stubPKCS10Request: b64(badSignature) },
      ['spec.stubPKCS10Request: Invalid value: could not verify the certificate request signature'],
    ],
    [
      'a stub with an RSA 2048 key',
      rsaStub,
      [
        'spec.stubPKCS10Request: Invalid value: "2048-bit modulus": RSA keys must have modulus size 3072 or 4096',
      ],
    ],
  ];
  for (const [name, keys, want] of cases) {
    t.same(validatePodCertificateRequestCreate(bare(keys)), want, name);
  }
  const uidless = { ...bare(pkix), spec: { ...bare(pkix).spec, podUID: undefined } };
  t.same(validatePodCertificateRequestCreate(uidless as unknown as PodCertificateRequest), [
    'spec.podUID: Invalid value: "": must not be empty',
    'spec.proofOfPossession: Invalid value: could not verify proof-of-possession signature',
  ]);
  // The stub request is not bound to the pod (KEP-4317): any pod UID goes.
  t.same(validatePodCertificateRequestCreate(bare({ ...stub, podUID: 'another-pod' })), []);
});

t.test('update of the main resource: the spec is immutable', async (t) => {
  const stored = withPodCertificateRequestDefaults(await kubeletRequest(p256, 'pkix'));
  const reordered = Object.fromEntries(Object.entries(stored.spec).reverse());
  t.same(
    validatePodCertificateRequestUpdate(
      {
        ...stored,
        metadata: { ...stored.metadata, labels: { a: 'b' } },
        spec: {
          ...reordered,
          unverifiedUserAnnotations: {},
          stubPKCS10Request: '',
        } as PodCertificateRequestSpec,
      },
      stored,
    ),
    [],
    'field order, empty and absent values and metadata do not count',
  );
  const changed = { ...stored, spec: { ...stored.spec, podName: 'api-1' } };
  const [error, ...more] = validatePodCertificateRequestUpdate(changed, stored);
  t.same(more, []);
  t.match(
    error,
    /^spec: Invalid value: \{"signerName":"example\.com\/spiffe".*…\(\d+ characters\): field is immutable$/,
  );
  t.same(
    validatePodCertificateRequestUpdate(
      { ...stored, spec: undefined } as unknown as PodCertificateRequest,
      stored,
    ),
    ['spec: Invalid value: {}: field is immutable'],
    'a body without a spec',
  );
  t.equal(
    validatePodCertificateRequestUpdate(
      { ...stored, spec: { ...stored.spec, unverifiedUserAnnotations: { 'example.com/a': 'b' } } },
      stored,
    ).length,
    1,
    'annotations are part of the spec',
  );
});

t.test('status update (ValidatePodCertificateRequestStatusUpdate)', async (t) => {
  const now = wholeSeconds(new Date());
  const notBefore = new Date(now.getTime() - 2 * MINUTE_MS);
  const pkixRequest = withPodCertificateRequestDefaults(await kubeletRequest(p256, 'pkix'));
  const stubRequest = withPodCertificateRequestDefaults(await kubeletRequest(p256, 'stub'));
  const leaf = await issueLeaf(signer, p256, { notBefore });
  const good = issuedStatus(leaf, notBefore);
  const withStatus = (
    status: PodCertificateRequestStatus,
    stored: PodCertificateRequest = pkixRequest,
  ): PodCertificateRequest => ({ ...stored, status });
  const check = (status: PodCertificateRequestStatus, stored = pkixRequest, at = now) =>
    validatePodCertificateRequestStatusUpdate(withStatus(status, stored), stored, at);
  const condition = (extra: Partial<Condition>): Condition =>
    ({ ...(good.conditions?.[0] as Condition), ...extra }) as Condition;
  const time = (ms: number) => goTimeString(new Date(ms));
  const chainError = (chain: string, detail: string) =>
    `status.certificateChain: Invalid value: ${goQuoteValue(chain)}: ${detail}`;

  t.test('accepted writes', async (t) => {
    t.same(check(good), [], 'Issued, 1.35 request');
    t.same(check(good, stubRequest), [], 'Issued, 1.36 request: the key of the stub request');
    t.same(
      check(issuedStatus(leaf + signer.certificatePem, notBefore)),
      [],
      'with a CA after the leaf',
    );
    t.same(
      check(issuedStatus(`junk\n${leaf}between\n${signer.certificatePem}trailing`, notBefore)),
      [],
      'text around blocks is ignored',
    );
    t.same(check(refusedStatus('Denied')), [], 'Denied');
    t.same(check(refusedStatus('Failed', 'CAExpired')), [], 'Failed');
    t.same(check({}), [], 'no change at all');
    t.same(
      check(undefined as unknown as PodCertificateRequestStatus),
      [],
      'a body without a status',
    );
    const messageless = refusedStatus('Denied');
    delete messageless.conditions?.[0]?.message;
    t.same(check(messageless, withStatus(messageless)), [], 'a condition without a message');
    t.same(check(good, withStatus(good)), [], 'rewriting a terminal status unchanged');
    const respelled = { ...good, notBefore: String(good.notBefore).replace('Z', '+00:00') };
    t.same(check(respelled, withStatus(good)), [], 'the same instant, spelled differently');
  });

  t.test('conditions', async (t) => {
    const cases: Array<[string, Condition[], string[]]> = [
      [
        'another type',
        [condition({ type: 'Approved' })],
        [
          'status.conditions[0].type: Unsupported value: "Approved": supported values: "Issued", "Denied", "Failed"',
        ],
      ],
      [
        'two terminal conditions',
        [condition({}), condition({ type: 'Denied' })],
        [
          'status.conditions[1].type: Invalid value: "Denied": There may be at most one condition with type "Issued", "Denied", or "Failed"',
        ],
      ],
      [
        'the same type twice',
        [condition({}), condition({})],
        [
          'status.conditions[1].type: Invalid value: "Issued": There may be at most one condition with type "Issued", "Denied", or "Failed"',
          'status.conditions[1].type: Duplicate value: "Issued"',
        ],
      ],
      [
        'status False',
        [condition({ status: 'False' })],
        ['status.conditions[0].status: Unsupported value: "False": supported values: "True"'],
      ],
      [
        'status Maybe',
        [condition({ status: 'Maybe' as Condition['status'] })],
        [
          'status.conditions[0].status: Unsupported value: "Maybe": supported values: "True"',
          'status.conditions[0].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"',
        ],
      ],
      [
        'an empty type',
        [condition({ type: '' })],
        [
          'status.conditions[0].type: Unsupported value: "": supported values: "Issued", "Denied", "Failed"',
          'status.conditions[0].type: Invalid value: "": name part must be non-empty',
          `status.conditions[0].type: Invalid value: "": name part ${QUALIFIED_REGEX}`,
        ],
      ],
      [
        'no reason',
        [condition({ reason: '' })],
        ['status.conditions[0].reason: Required value: must be set'],
      ],
      [
        'a reason with spaces',
        [condition({ reason: 'Not valid' })],
        [`status.conditions[0].reason: Invalid value: "Not valid": ${REASON_REGEX}`],
      ],
      [
        'a long reason',
        [condition({ reason: 'R'.repeat(1025) })],
        ['status.conditions[0].reason: Too long: may not be more than 1024 bytes'],
      ],
      [
        'a long message',
        [condition({ message: 'm'.repeat(32 * 1024 + 1) })],
        ['status.conditions[0].message: Too long: may not be more than 32768 bytes'],
      ],
      [
        'no lastTransitionTime',
        [condition({ lastTransitionTime: '' })],
        ['status.conditions[0].lastTransitionTime: Required value: must be set'],
      ],
      [
        'a malformed lastTransitionTime',
        [condition({ lastTransitionTime: 'yesterday' })],
        [`status.conditions[0].lastTransitionTime: Invalid value: "yesterday": ${RFC3339}`],
      ],
      [
        'an empty condition',
        [{} as Condition],
        [
          'status.conditions[0].type: Unsupported value: "": supported values: "Issued", "Denied", "Failed"',
          'status.conditions[0].type: Invalid value: "": name part must be non-empty',
          `status.conditions[0].type: Invalid value: "": name part ${QUALIFIED_REGEX}`,
          'status.conditions[0].status: Unsupported value: "": supported values: "False", "True", "Unknown"',
          'status.conditions[0].lastTransitionTime: Required value: must be set',
          'status.conditions[0].reason: Required value: must be set',
        ],
      ],
      [
        'an Issued condition without a status',
        [{ ...condition({}), status: undefined } as unknown as Condition],
        [
          'status.conditions[0].status: Unsupported value: "": supported values: "True"',
          'status.conditions[0].status: Unsupported value: "": supported values: "False", "True", "Unknown"',
        ],
      ],
      [
        'a negative observedGeneration',
        [condition({ observedGeneration: -1 })],
        [
          'status.conditions[0].observedGeneration: Invalid value: -1: must be greater than or equal to zero',
        ],
      ],
    ];
    for (const [name, conditions, want] of cases) {
      t.same(check({ ...good, conditions }), want, name);
    }
  });

  t.test('terminal states', async (t) => {
    const immutable =
      'status: Invalid value: immutable after PodCertificateRequest is issued, denied, or failed';
    t.same(
      check(refusedStatus('Denied'), withStatus(good)),
      [immutable],
      'Issued cannot become Denied',
    );
    t.same(
      check(good, withStatus(refusedStatus('Failed'))),
      [immutable],
      'Failed cannot become Issued',
    );
    t.same(
      check(
        { ...good, beginRefreshAt: formatTimestamp(new Date(notBefore.getTime() + HOUR_MS)) },
        withStatus(good),
      ),
      [immutable],
      'an issued status cannot be touched',
    );
    t.same(check({ ...refusedStatus('Denied'), certificateChain: leaf }), [
      'status: Invalid value: non-condition status fields must be empty when denying or failing the PodCertificateRequest',
    ]);
    t.same(check({ ...refusedStatus('Failed'), notAfter: good.notAfter as string }), [
      'status: Invalid value: non-condition status fields must be empty when denying or failing the PodCertificateRequest',
    ]);
    t.same(
      check({ ...refusedStatus('Denied'), notAfter: 'never' }),
      [
        'status: Invalid value: non-condition status fields must be empty when denying or failing the PodCertificateRequest',
      ],
      'a malformed time is no empty one',
    );
    t.same(
      check({ certificateChain: leaf }),
      [
        'status: Invalid value: status is immutable unless transitioning to "Issued", "Denied", or "Failed"',
      ],
      'no progress markers',
    );
  });

  t.test('the issued chain', async (t) => {
    const bigChain = `${leaf}${'x'.repeat(102_400)}`;
    const keyBlock = encodePem('PRIVATE KEY', new Uint8Array(16));
    const junkCert = encodePem('CERTIFICATE', new Uint8Array([0x30, 0x03, 0x02, 0x01, 0x01]));
    const otherLeaf = await issueLeaf(signer, other, { notBefore });
    const named = await issueLeaf(signer, p256, {
      notBefore,
      dnsNames: ['ok.example.com', '', 'a..b', '.lead', 'trail.'],
      emailAddresses: [
        'ops@example.com',
        'Ops <ops@example.com>',
        '"quoted local"@example.com',
        'not an address',
        'no-at',
      ],
    });
    const cases: Array<[string, string, string[]]> = [
      [
        'over 100 KiB',
        bigChain,
        ['status.certificateChain: Too long: may not be more than 102400 bytes'],
      ],
      [
        'empty',
        '',
        [
          'status.certificateChain: Invalid value: "": issued certificate chain must contain at least one certificate',
        ],
      ],
      [
        'a key first',
        keyBlock + leaf,
        [
          chainError(
            keyBlock + leaf,
            'issued certificate chain must consist entirely of CERTIFICATE PEM blocks',
          ),
        ],
      ],
      [
        'a leaf that does not parse',
        junkCert,
        [chainError(junkCert, 'leaf certificate does not parse as valid X.509')],
      ],
      [
        'a leaf for another key',
        otherLeaf,
        [chainError(otherLeaf, 'leaf certificate was not issued to the requested public key')],
      ],
      [
        'bad names in the leaf',
        named,
        [
          'status.certificateChain: Invalid value: "": leaf certificate should not contain empty DNSName',
          "status.certificateChain: Invalid value: \"a..b\": leaf certificate's DNSName should not contain '..'",
          "status.certificateChain: Invalid value: \".lead\": leaf certificate's DNSName should not start or end with '.'",
          "status.certificateChain: Invalid value: \"trail.\": leaf certificate's DNSName should not start or end with '.'",
          'status.certificateChain: Invalid value: "not an address": leaf certificate should not contain invalid EmailAddress',
          'status.certificateChain: Invalid value: "no-at": leaf certificate should not contain invalid EmailAddress',
        ],
      ],
      [
        'a key after the leaf',
        leaf + keyBlock,
        [
          chainError(
            leaf + keyBlock,
            'issued certificate chain must consist entirely of CERTIFICATE PEM blocks',
          ),
        ],
      ],
      [
        'an intermediate that does not parse',
        leaf + junkCert,
        [chainError(leaf + junkCert, 'intermediate certificate does not parse as valid X.509')],
      ],
    ];
    for (const [name, chain, want] of cases) {
      t.same(check(issuedStatus(chain, notBefore)), want, name);
    }
    const { certificateChain: _chain, ...chainless } = good;
    t.same(
      check(chainless),
      [
        'status.certificateChain: Invalid value: "": issued certificate chain must contain at least one certificate',
      ],
      'Issued without a chain',
    );
    t.same(
      check(good, { ...pkixRequest, spec: undefined } as unknown as PodCertificateRequest),
      ['spec.pkixPublicKey: Invalid value: "": must be a valid PKIX-serialized public key'],
      'a stored request without a spec',
    );
    const undefaulted = await kubeletRequest(p256, 'pkix');
    t.same(
      check(good, undefaulted),
      [],
      'a stored request without maxExpirationSeconds: 86400 applies',
    );
    const badKey = (spec: Partial<PodCertificateRequestSpec>) =>
      ({
        ...pkixRequest,
        spec: {
          ...pkixRequest.spec,
          pkixPublicKey: undefined,
          proofOfPossession: undefined,
          ...spec,
        },
      }) as PodCertificateRequest;
    t.same(
      check(good, badKey({ pkixPublicKey: 'AAAA' })),
      ['spec.pkixPublicKey: Invalid value: "AAAA": must be a valid PKIX-serialized public key'],
      'a stored key that does not parse (never stored by this server)',
    );
    t.same(check(good, badKey({ stubPKCS10Request: 'AAAA' })), [
      'spec.stubPKCS10Request: Invalid value: "AAAA": must be a DER-encoded PKCS#10 certificate request',
    ]);
  });

  t.test('the times', async (t) => {
    const nb = notBefore.getTime();
    const set = (fields: Partial<PodCertificateRequestStatus>) => ({ ...good, ...fields });
    const without = ({
      notBefore: _a,
      notAfter: _b,
      beginRefreshAt: _c,
      ...rest
    }: PodCertificateRequestStatus) => rest;
    t.same(check(without(good)), [
      'status.notBefore: Required value: must be present and consistent with the issued certificate',
      'status.notAfter: Required value: must be present and consistent with the issued certificate',
      'status.beginRefreshAt: Required value: must be present and in the range [notbefore+10min, notafter-10min]',
    ]);
    t.same(check(set({ notBefore: 'soon' })), [
      `status.notBefore: Invalid value: "soon": ${RFC3339}`,
    ]);
    t.same(check(set({ notBefore: formatTimestamp(new Date(nb + 1000)) })), [
      `status.notBefore: Invalid value: ${time(nb + 1000)}: must be set to the NotBefore time encoded in the leaf certificate`,
    ]);
    t.same(check(set({ notAfter: formatTimestamp(new Date(nb + 23 * HOUR_MS)) })), [
      `status.notAfter: Invalid value: ${time(nb + 23 * HOUR_MS)}: must be set to the NotAfter time encoded in the leaf certificate`,
    ]);
    const window = "must be set to within 5 minutes of kube-apiserver's current time";
    t.same(
      check(good, pkixRequest, new Date(nb + 5 * MINUTE_MS)),
      [`status.notBefore: Invalid value: ${time(nb)}: ${window}`],
      'exactly 5 minutes after notBefore is outside the window',
    );
    t.same(
      check(good, pkixRequest, new Date(nb - 5 * MINUTE_MS)),
      [`status.notBefore: Invalid value: ${time(nb)}: ${window}`],
      'exactly 5 minutes before notBefore too',
    );
    t.same(check(good, pkixRequest, new Date(nb + 5 * MINUTE_MS - 1000)), [], 'a second inside');
    t.same(check(good, pkixRequest, new Date(nb - 5 * MINUTE_MS + 1000)), [], 'on both sides');

    const short = await issueLeaf(signer, p256, { notBefore, lifetimeMs: 59 * MINUTE_MS });
    t.same(check(issuedStatus(short, notBefore, 59 * MINUTE_MS)), [
      'status.certificateChain: Invalid value: 59m0s: leaf certificate lifetime must be >= 1 hour',
    ]);
    const long = await issueLeaf(signer, p256, { notBefore, lifetimeMs: 25 * HOUR_MS });
    t.same(check(issuedStatus(long, notBefore, 25 * HOUR_MS)), [
      'status.certificateChain: Invalid value: 25h0m0s: leaf certificate lifetime must be <= spec.maxExpirationSeconds (86400)',
    ]);
    const max = (seconds: number) => ({
      ...pkixRequest,
      spec: { ...pkixRequest.spec, maxExpirationSeconds: seconds },
    });
    t.same(
      check(issuedStatus(long, notBefore, 25 * HOUR_MS), max(89_999)),
      [
        'status.certificateChain: Invalid value: 25h0m0s: leaf certificate lifetime must be <= spec.maxExpirationSeconds (89999)',
      ],
      'the stored maxExpirationSeconds counts',
    );
    t.same(check(issuedStatus(long, notBefore, 25 * HOUR_MS), max(90_000)), [], 'exactly the most');
    const hour = await issueLeaf(signer, p256, { notBefore, lifetimeMs: HOUR_MS });
    t.same(
      check(issuedStatus(hour, notBefore, HOUR_MS, 10 * MINUTE_MS)),
      [],
      'one hour, refresh at the earliest',
    );
    t.same(check(issuedStatus(hour, notBefore, HOUR_MS, 50 * MINUTE_MS)), [], 'and at the latest');
    t.same(check(issuedStatus(hour, notBefore, HOUR_MS, 10 * MINUTE_MS - 1000)), [
      `status.beginRefreshAt: Invalid value: ${time(nb + 10 * MINUTE_MS - 1000)}: must be at least 10 minutes after status.notBefore`,
    ]);
    t.same(check(issuedStatus(hour, notBefore, HOUR_MS, 50 * MINUTE_MS + 1000)), [
      `status.beginRefreshAt: Invalid value: ${time(nb + 50 * MINUTE_MS + 1000)}: must be at least 10 minutes before status.notAfter`,
    ]);
  });
});

t.test('a status change is any semantic difference', async (t) => {
  const request = withPodCertificateRequestDefaults(await kubeletRequest(p256, 'pkix'));
  const denied = refusedStatus('Denied');
  const same = { ...request, status: denied };
  t.equal(podCertificateRequestStatusChanged(same, same), false);
  t.equal(
    podCertificateRequestStatusChanged({ ...request, status: {} }, request),
    false,
    'empty and absent',
  );
  t.equal(podCertificateRequestStatusChanged(same, request), true);
  const reworded = { ...request, status: refusedStatus('Denied', 'Other') };
  t.equal(podCertificateRequestStatusChanged(reworded, same), true);
});

t.test('thousands of bad conditions or annotations: ten errors per list and a count', async (t) => {
  const request = withPodCertificateRequestDefaults(await kubeletRequest(p256, 'pkix'));
  const conditions = Array.from(
    { length: 500 },
    (_, i) => ({ type: `Bogus${i}`, status: 'True' }) as Condition,
  );
  const errors = validatePodCertificateRequestStatusUpdate(
    { ...request, status: { conditions } },
    request,
    new Date(),
  );
  t.match(errors[0], /^status\.conditions\[0\]\.type: Unsupported value: "Bogus0"/);
  t.ok(
    errors.includes('status.conditions: and 490 more errors (only the first 10 are listed)'),
    'the terminal-type check',
  );
  t.ok(
    errors.includes('status.conditions: and 990 more errors (only the first 10 are listed)'),
    'metav1 condition rules (no time, no reason for each)',
  );
  t.ok(errors.length <= 22, `${errors.length} errors`);
  const annotations = Object.fromEntries(
    Array.from({ length: 300 }, (_, i) => [`key${String(i).padStart(3, '0')}`, 'v']),
  );
  const created = validatePodCertificateRequestCreate({
    ...request,
    spec: { ...request.spec, unverifiedUserAnnotations: annotations },
  });
  t.same(created.slice(0, 2), [
    `spec.unverifiedUserAnnotations: Invalid value: "key000": must be domain-prefixed (e.g. 'example.com/key')`,
    `spec.unverifiedUserAnnotations: Invalid value: "key001": must be domain-prefixed (e.g. 'example.com/key')`,
  ]);
  t.ok(
    created.includes(
      'spec.unverifiedUserAnnotations: and 290 more errors (only the first 10 are listed)',
    ),
    created.join('\n'),
  );
});
