import t from 'tap';
import { encodeBytes } from '../../src/api/certificate-request.js';
import {
  type CertificateSigningRequest,
  CSR_KEY_USAGES,
  type CsrCondition,
} from '../../src/api/certificate-signing-request.js';
import type { Issuer } from '../../src/api/issuer.js';
import { parseSignerName } from '../../src/api/issuer-signer-name.js';
import type { SignerScope } from '../../src/issuer/certificaterequests/request-plan.js';
import { csrResult } from '../../src/issuer/certificatesigningrequests/csr-outcome.js';
import {
  type CsrIssuerRef,
  csrIssuerRef,
  deniedReference,
  planCsrSync,
  requestedDuration,
} from '../../src/issuer/certificatesigningrequests/csr-plan.js';
import {
  mayReference,
  referenceAttributes,
  requesterOf,
} from '../../src/issuer/certificatesigningrequests/csr-reference.js';
import { csrSigningInput } from '../../src/issuer/certificatesigningrequests/csr-signing.js';
import { failedCsrStatus } from '../../src/issuer/certificatesigningrequests/csr-status.js';
import { KEY_USAGE_NAMES } from '../../src/pki/usages.js';
import {
  clusterIssuer,
  issuer,
  issuerFrom,
  withConditions,
  withNamespace,
  withSpec,
} from '../support/builders/index.js';
import { keyAndCsr } from '../support/issuer-fixtures.js';

const approved: CsrCondition = { type: 'Approved', status: 'True', reason: 'ByHand' };
const NINETY_DAYS_MS = 2160 * 3600 * 1000;

function csr(
  signerName: string,
  conditions: CsrCondition[] = [approved],
  extra: {
    annotations?: Record<string, string>;
    expirationSeconds?: number;
    certificate?: string;
  } = {},
): CertificateSigningRequest {
  return {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name: 'c', ...(extra.annotations ? { annotations: extra.annotations } : {}) },
    spec: {
      request: '',
      signerName,
      usages: ['digital signature'],
      ...(extra.expirationSeconds !== undefined
        ? { expirationSeconds: extra.expirationSeconds }
        : {}),
    },
    status: { conditions, ...(extra.certificate ? { certificate: extra.certificate } : {}) },
  };
}

/** Sets the Ready condition, True or False. */
const isReady = (ready: boolean) =>
  withConditions([{ type: 'Ready', status: ready ? 'True' : 'False' }]);

/** The Issuer shop/ca and the ClusterIssuer ca, Ready: the bases of the cases. */
const inShop = issuer('ca', withNamespace('shop'), isReady(true));
const clusterWide = clusterIssuer('ca', isReady(true));

const ISSUER = 'issuers.cert-manager.io/shop.ca';
const CLUSTER_ISSUER = 'clusterissuers.cert-manager.io/ca';
const caSpec = { ca: { secretName: 's' } };
const both: SignerScope = {
  handles: (type) => type === 'ca' || type === 'selfSigned',
  responsibleFor: () => true,
};
const found = (found: Issuer | undefined) => (_ref: CsrIssuerRef) => found;
const neverLooked = (_ref: CsrIssuerRef): Issuer => {
  throw new Error('the issuer must not be looked up at this step');
};

t.test("signer names are taken apart as cert-manager's signername.go does", async (t) => {
  t.same(parseSignerName('issuers.cert-manager.io/shop.my.ca'), {
    type: 'issuers',
    group: 'cert-manager.io',
    namespace: 'shop',
    name: 'my.ca',
  });
  t.same(parseSignerName('clusterissuers.cert-manager.io/my.ca'), {
    type: 'clusterissuers',
    group: 'cert-manager.io',
    namespace: '',
    name: 'my.ca',
  });
  t.same(parseSignerName('issuers.cert-manager.io/ca'), {
    type: 'issuers',
    group: 'cert-manager.io',
    namespace: '',
    name: 'ca',
  });
  t.same(parseSignerName('foo.example.com/x'), {
    type: 'foo',
    group: 'example.com',
    namespace: '',
    name: 'x',
  });
  for (const malformed of ['', 'a/b/c', 'nodot/x', 'issuers.cert-manager.io/', 'x.y/.z']) {
    t.equal(parseSignerName(malformed), undefined, malformed || '(empty)');
    t.equal(csrIssuerRef(malformed), undefined, `${malformed || '(empty)'}: no issuer`);
  }
  t.same(csrIssuerRef('issuers.cert-manager.io/shop.a.b'), {
    kind: 'Issuer',
    namespace: 'shop',
    name: 'a.b',
  });
  t.same(csrIssuerRef('clusterissuers.cert-manager.io/a.b'), {
    kind: 'ClusterIssuer',
    namespace: '',
    name: 'a.b',
  });
  t.equal(csrIssuerRef('issuers.example.com/shop.ca'), undefined, 'another group');
  t.equal(csrIssuerRef('signers.cert-manager.io/ca'), undefined, 'another type');
});

t.test('the sync order of certificatesigningrequests/sync.go, step by step', async (t) => {
  const ca = issuerFrom(inShop, withSpec(caSpec));
  const clusterCa = issuerFrom(clusterWide, withSpec(caSpec));
  const cases: Array<[string, CertificateSigningRequest, (ref: CsrIssuerRef) => unknown, unknown]> =
    [
      ['malformed name', csr('kubernetes.io'), neverLooked, { step: 'ignore' }],
      ['another group', csr('issuers.example.com/shop.ca'), neverLooked, { step: 'ignore' }],
      [
        'kubelet serving signer',
        csr('kubernetes.io/kubelet-serving'),
        neverLooked,
        { step: 'ignore' },
      ],
      [
        'Failed, whatever its status',
        csr(ISSUER, [approved, { type: 'Failed', status: 'False' }]),
        neverLooked,
        { step: 'ignore' },
      ],
      [
        'Denied, whatever its status',
        csr(ISSUER, [{ type: 'Denied', status: 'Unknown' }]),
        neverLooked,
        { step: 'ignore' },
      ],
      ['not approved', csr(ISSUER, []), found(ca), { step: 'waitForApproval' }],
      [
        'approved with any status counts as approved',
        csr(ISSUER, [{ type: 'Approved', status: 'False' }], { certificate: 'Y2VydA==' }),
        found(ca),
        { step: 'ignore' },
      ],
      [
        'not approved, unknown type: announced all the same',
        csr('signers.cert-manager.io/x', []),
        found(undefined),
        { step: 'waitForApproval' },
      ],
      [
        'certificate already set',
        csr(ISSUER, [approved], { certificate: 'eA==' }),
        found(ca),
        {
          step: 'ignore',
        },
      ],
      ['unknown type', csr('signers.cert-manager.io/x'), found(undefined), { step: 'ignore' }],
      [
        'Issuer not found',
        csr(ISSUER),
        found(undefined),
        { step: 'warn', reason: 'IssuerNotFound', message: 'Referenced Issuer shop/ca not found' },
      ],
      [
        'ClusterIssuer not found',
        csr(CLUSTER_ISSUER),
        found(undefined),
        {
          step: 'warn',
          reason: 'IssuerNotFound',
          message: 'Referenced ClusterIssuer /ca not found',
        },
      ],
      [
        'an Issuer named without a namespace',
        csr('issuers.cert-manager.io/ca'),
        found(undefined),
        { step: 'warn', reason: 'IssuerNotFound', message: 'Referenced Issuer /ca not found' },
      ],
      [
        'no issuer type',
        csr(CLUSTER_ISSUER),
        found(issuerFrom(clusterWide, withSpec({}))),
        {
          step: 'warn',
          reason: 'IssuerTypeMissing',
          message: 'Referenced ClusterIssuer /ca is missing type',
        },
      ],
      [
        'an issuer of another type',
        csr(CLUSTER_ISSUER),
        found(issuerFrom(clusterWide, withSpec({ acme: {} } as Issuer['spec']))),
        { step: 'ignore' },
      ],
      [
        'a ClusterIssuer needs no reference review',
        csr(CLUSTER_ISSUER),
        found(clusterCa),
        {
          step: 'sign',
          issuer: clusterCa,
          issuerType: 'ca',
          durationMs: NINETY_DAYS_MS,
          isCA: false,
        },
      ],
    ];
  for (const [label, request, lookup, want] of cases) {
    t.same(planCsrSync(request, lookup as (ref: CsrIssuerRef) => Issuer, both), want, label);
  }
  const plan = planCsrSync(csr(ISSUER), found(ca), both);
  t.same(
    plan,
    {
      step: 'reviewReference',
      issuer: { kind: 'Issuer', namespace: 'shop', name: 'ca' },
      afterReview: {
        step: 'sign',
        issuer: ca,
        issuerType: 'ca',
        durationMs: NINETY_DAYS_MS,
        isCA: false,
      },
    },
    'a namespaced Issuer: the reference review comes first',
  );
  t.same(deniedReference({ kind: 'Issuer', namespace: 'shop', name: 'ca' }), {
    step: 'fail',
    reason: 'DeniedReference',
    message: 'Requester may not reference Namespaced Issuer shop/ca',
  });
});

t.test('the steps after the reference review: duration, then readiness', async (t) => {
  const after = (request: CertificateSigningRequest, ready = true) =>
    planCsrSync(request, found(issuerFrom(clusterWide, withSpec(caSpec), isReady(ready))), both);
  t.match(after(csr(CLUSTER_ISSUER, [approved], { expirationSeconds: 599 })), {
    step: 'fail',
    reason: 'InvalidDuration',
    message: 'CertificateSigningRequest minimum allowed duration is 10m0s, requested 9m59s',
  });
  t.match(
    after(
      csr(CLUSTER_ISSUER, [approved], {
        annotations: { 'experimental.cert-manager.io/request-duration': '-1h' },
      }),
    ),
    {
      step: 'fail',
      reason: 'InvalidDuration',
      message: 'CertificateSigningRequest minimum allowed duration is 10m0s, requested -1h0m0s',
    },
  );
  t.same(
    after(
      csr(CLUSTER_ISSUER, [approved], {
        annotations: { 'experimental.cert-manager.io/request-duration': 'a week' },
      }),
    ),
    {
      step: 'fail',
      reason: 'ErrorParseDuration',
      message:
        'Failed to parse requested duration: failed to parse requested duration on annotation "experimental.cert-manager.io/request-duration": time: invalid duration "a week"',
    },
  );
  t.same(
    after(csr(CLUSTER_ISSUER), false),
    {
      step: 'warn',
      reason: 'IssuerNotReady',
      message: 'Referenced ClusterIssuer /ca does not have a Ready status condition',
    },
    'not ready: a Warning event, not a failure',
  );
  t.same(
    after(csr(CLUSTER_ISSUER, [approved], { expirationSeconds: 1 }), false),
    {
      step: 'fail',
      reason: 'InvalidDuration',
      message: 'CertificateSigningRequest minimum allowed duration is 10m0s, requested 1s',
    },
    'the duration is checked before readiness',
  );
  const namespaced = planCsrSync(
    csr(ISSUER),
    found(issuerFrom(inShop, withSpec(caSpec), isReady(false))),
    both,
  );
  t.match(namespaced, {
    step: 'reviewReference',
    afterReview: {
      reason: 'IssuerNotReady',
      message: 'Referenced Issuer shop/ca does not have a Ready status condition',
    },
  });
  for (const [value, isCA] of [
    ['true', true],
    ['True', false],
    ['yes', false],
    ['', false],
  ] as const) {
    t.match(
      after(
        csr(CLUSTER_ISSUER, [approved], {
          annotations: { 'experimental.cert-manager.io/request-is-ca': value },
        }),
      ),
      { step: 'sign', isCA },
      `request-is-ca ${JSON.stringify(value)}`,
    );
  }
});

t.test('duration: the annotation, then expirationSeconds, then 90 days', async (t) => {
  const annotations = { 'experimental.cert-manager.io/request-duration': '2h30m' };
  t.same(requestedDuration(csr(ISSUER, [], { annotations, expirationSeconds: 3600 })), {
    ms: 9_000_000,
  });
  t.same(requestedDuration(csr(ISSUER, [], { expirationSeconds: 3600 })), { ms: 3_600_000 });
  t.same(requestedDuration(csr(ISSUER)), { ms: NINETY_DAYS_MS });
  t.match(
    requestedDuration(
      csr(ISSUER, [], {
        annotations: { 'experimental.cert-manager.io/request-duration': '' },
        expirationSeconds: 3600,
      }),
    ),
    { error: /time: invalid duration ""/ },
    'an empty annotation is still the annotation',
  );
});

t.test('which signer controller takes the type-independent steps', async (t) => {
  const caOnly: SignerScope = {
    handles: (type) => type === 'ca',
    responsibleFor: (type) => type === 'ca',
  };
  const selfSigned = issuerFrom(clusterWide, withSpec({ selfSigned: {} }));
  t.same(planCsrSync(csr(CLUSTER_ISSUER, []), found(selfSigned), caOnly), { step: 'ignore' });
  t.same(planCsrSync(csr(CLUSTER_ISSUER), found(undefined), caOnly), { step: 'ignore' });
  t.same(planCsrSync(csr(CLUSTER_ISSUER), found(issuerFrom(clusterWide, withSpec({}))), caOnly), {
    step: 'ignore',
  });
  t.same(planCsrSync(csr(CLUSTER_ISSUER), found(selfSigned), caOnly), { step: 'ignore' });
});

t.test('the reference review asks for the name, then *, as the requester', async (t) => {
  const request = csr(ISSUER);
  request.spec = {
    ...request.spec,
    username: 'alice',
    uid: 'u-1',
    groups: ['devs', 'system:authenticated'],
    extra: { scopes: ['a'] },
  };
  t.same(requesterOf(request), {
    username: 'alice',
    uid: 'u-1',
    groups: ['devs', 'system:authenticated'],
    extra: { scopes: ['a'] },
  });
  t.same(requesterOf(csr(ISSUER)), { username: '' });
  const ref: CsrIssuerRef = { kind: 'Issuer', namespace: 'shop', name: 'ca' };
  t.same(
    referenceAttributes(ref).map((a) => a.name),
    ['ca', '*'],
  );
  t.match(referenceAttributes(ref)[0], {
    verb: 'reference',
    group: 'cert-manager.io',
    resource: 'signers',
    version: '*',
    namespace: 'shop',
  });
  const asked: string[] = [];
  const starOnly = async (_user: unknown, attributes: { name?: string }) => {
    asked.push(attributes.name ?? '');
    return attributes.name === '*';
  };
  t.equal(await mayReference(starOnly, request, ref), true, '* is enough');
  t.same(asked, ['ca', '*']);
  asked.length = 0;
  const nameOnly = async (_user: unknown, attributes: { name?: string }) => {
    asked.push(attributes.name ?? '');
    return attributes.name === 'ca';
  };
  t.equal(await mayReference(nameOnly, request, ref), true);
  t.same(asked, ['ca'], 'the exact name answers first');
  t.equal(await mayReference(async () => false, request, ref), false);
});

t.test('signing outcomes as CSR reasons and messages', async (t) => {
  const secret = { namespace: 'shop', name: 's' };
  const cause = new Error('boom');
  t.same(csrResult('ca', { kind: 'issued', chainPem: 'CHAIN', caPem: 'CA' }), {
    outcome: 'issued',
    chainPem: 'CHAIN',
    message: 'Certificate fetched from issuer successfully',
  });
  t.match(csrResult('selfSigned', { kind: 'issued', chainPem: 'C', caPem: 'C' }), {
    message: 'Certificate self signed successfully',
  });
  const cases: Array<[Parameters<typeof csrResult>, unknown]> = [
    [
      ['ca', { kind: 'caSecretMissing', secret }],
      { outcome: 'wait', reason: 'SecretMissing', message: 'Referenced secret shop/s not found' },
    ],
    [
      ['ca', { kind: 'caSecretInvalid', secret, cause }],
      {
        outcome: 'wait',
        reason: 'SecretInvalidData',
        message: 'Failed to parse signing CA keypair from secret shop/s: boom',
      },
    ],
    [
      ['selfSigned', { kind: 'keySecretMissing', secret }],
      { outcome: 'wait', reason: 'SecretNotFound', message: 'Referenced Secret shop/s not found' },
    ],
    [
      ['selfSigned', { kind: 'keySecretInvalid', secret, cause }],
      {
        outcome: 'wait',
        reason: 'ErrorParsingKey',
        message: 'Failed to parse signing key from secret shop/s: boom',
      },
    ],
    [
      ['selfSigned', { kind: 'keyNotReferenced' }],
      {
        outcome: 'failed',
        reason: 'MissingAnnotation',
        message:
          'Missing private key reference annotation: "experimental.cert-manager.io/private-key-secret-name"',
      },
    ],
    [
      ['ca', { kind: 'requestInvalid', cause }],
      {
        outcome: 'failed',
        reason: 'SigningError',
        message: 'Error generating certificate template: boom',
      },
    ],
    [
      ['selfSigned', { kind: 'requestInvalid', cause }],
      {
        outcome: 'failed',
        reason: 'ErrorGenerating',
        message: 'Error generating certificate template: boom',
      },
    ],
    [
      ['selfSigned', { kind: 'keyMismatch' }],
      {
        outcome: 'failed',
        reason: 'ErrorKeyMatch',
        message: 'Referenced private key in Secret does not match that in the request',
      },
    ],
    [
      ['ca', { kind: 'signingFailed', cause }],
      { outcome: 'failed', reason: 'SigningError', message: 'Error signing certificate: boom' },
    ],
    [
      ['selfSigned', { kind: 'signingFailed', cause }],
      { outcome: 'failed', reason: 'ErrorSigning', message: 'Error signing certificate: boom' },
    ],
  ];
  for (const [[type, outcome], want] of cases) {
    t.same(csrResult(type, outcome), want, `${type} ${outcome.kind}`);
  }
});

t.test('the Failed condition is appended with both times', async (t) => {
  const request = csr(ISSUER, [approved], { certificate: '' });
  const status = failedCsrStatus(
    request,
    'InvalidDuration',
    'too short',
    new Date('2026-03-01T10:00:00.123Z'),
  );
  t.same(status.conditions, [
    approved,
    {
      type: 'Failed',
      status: 'True',
      reason: 'InvalidDuration',
      message: 'too short',
      lastTransitionTime: '2026-03-01T10:00:00Z',
      lastUpdateTime: '2026-03-01T10:00:00Z',
    },
  ]);
  t.same(request.status?.conditions, [approved], 'the CSR itself is not changed');
  const { status: _status, ...fresh } = request;
  t.same(
    failedCsrStatus(fresh, 'R', 'm', new Date(0)).conditions?.map((c) => c.type),
    ['Failed'],
    'a CSR without status',
  );
});

t.test('certificates.k8s.io usages are spelled as cert-manager spells them', async (t) => {
  t.same([...CSR_KEY_USAGES].sort(), [...KEY_USAGE_NAMES].sort(), 'the same 23 names');
  const { csrPem } = await keyAndCsr({ algorithm: 'ECDSA', size: 256 });
  const request = csr(CLUSTER_ISSUER);
  request.spec = { ...request.spec, request: encodeBytes(csrPem), usages: ['server auth'] };
  const input = csrSigningInput(request, { durationMs: 3_600_000, isCA: true, keyNamespace: 'x' });
  t.equal(input.selfSignedKey, undefined, 'no annotation, no key');
  t.match(await input.read(), {
    durationMs: 3_600_000,
    isCA: true,
    usages: ['server auth'],
    certSignForCA: false,
  });
  const { usages: _usages, ...withoutUsages } = request.spec;
  t.same(
    (
      await csrSigningInput(
        { ...request, spec: withoutUsages },
        { durationMs: 1, isCA: false, keyNamespace: 'x' },
      ).read()
    ).usages,
    [],
    'no usages: the signer applies the defaults',
  );
  const { request: _request, ...withoutRequest } = request.spec;
  await t.rejects(
    csrSigningInput(
      { ...request, spec: withoutRequest as CertificateSigningRequest['spec'] },
      { durationMs: 1, isCA: false, keyNamespace: 'x' },
    ).read(),
    /cannot parse certificate request/,
    'no request: nothing to sign',
  );
  request.spec.usages = ['server auth', 'frobnicate', 'teleport'];
  await t.rejects(
    csrSigningInput(request, { durationMs: 1, isCA: false, keyNamespace: 'x' }).read(),
    { message: 'unknown key usages: [frobnicate teleport]' },
  );
  request.metadata.annotations = { 'experimental.cert-manager.io/private-key-secret-name': 'k' };
  t.same(
    csrSigningInput(request, { durationMs: 1, isCA: false, keyNamespace: 'cert-csi' })
      .selfSignedKey,
    { secret: { namespace: 'cert-csi', name: 'k' } },
    "the key Secret lives in the issuer's resource namespace",
  );
});
