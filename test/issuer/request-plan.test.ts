import t from 'tap';
import type { CertificateRequest } from '../../src/api/certificate-request.js';
import type { Condition } from '../../src/api/conditions.js';
import type { Issuer } from '../../src/api/issuer.js';
import {
  planRequestSync,
  type SignerScope,
} from '../../src/issuer/certificaterequests/request-plan.js';
import type { IssuerLookup } from '../../src/issuer/issuer-lookup.js';

const approved: Condition = { type: 'Approved', status: 'True', reason: 'cert-manager.io' };

function cr(
  conditions: Condition[],
  extra: { group?: string; kind?: string; certificate?: string; failureTime?: string } = {},
): CertificateRequest {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'CertificateRequest',
    metadata: { name: 'r', namespace: 'ns' },
    spec: {
      request: '',
      issuerRef: {
        name: 'i',
        ...(extra.group !== undefined ? { group: extra.group } : {}),
        ...(extra.kind !== undefined ? { kind: extra.kind } : {}),
      },
    },
    status: {
      conditions,
      ...(extra.certificate ? { certificate: extra.certificate } : {}),
      ...(extra.failureTime ? { failureTime: extra.failureTime } : {}),
    },
  };
}

function readyIssuer(spec: Issuer['spec'], ready = true): Issuer {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Issuer',
    metadata: { name: 'i', namespace: 'ns' },
    spec,
    status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  };
}

// One controller signing both of our types and taking every type-independent step: the
// single generic controller's view. Per-type scopes are tested below.
const handlesOurs: SignerScope = {
  handles: (type) => type === 'ca' || type === 'selfSigned',
  responsibleFor: () => true,
};
const found =
  (issuer: Issuer): (() => IssuerLookup) =>
  () => ({ issuer });
const missing = () => ({ notFound: 'issuer.cert-manager.io "i" not found' });
const neverLooked = (): IssuerLookup => {
  throw new Error('the issuer must not be looked up at this step');
};

t.test('the sync order of the reference, step by step', async (t) => {
  const ca = readyIssuer({ ca: { secretName: 's' } });
  const cases: Array<[string, CertificateRequest, () => IssuerLookup, unknown]> = [
    ['external group', cr([approved], { group: 'example.com' }), neverLooked, { step: 'ignore' }],
    ['denied', cr([{ type: 'Denied', status: 'True' }]), missing, { step: 'deny' }],
    [
      'denied and already reported',
      cr(
        [
          { type: 'Denied', status: 'True' },
          { type: 'Ready', status: 'False', reason: 'Denied' },
        ],
        { failureTime: '2026-01-01T00:00:00Z' },
      ),
      neverLooked,
      { step: 'ignore' },
    ],
    [
      'invalid request',
      cr([{ type: 'InvalidRequest', status: 'True' }]),
      neverLooked,
      { step: 'ignore' },
    ],
    ['not approved', cr([]), missing, { step: 'waitForApproval' }],
    [
      'already failed',
      cr([approved, { type: 'Ready', status: 'False', reason: 'Failed' }]),
      neverLooked,
      { step: 'ignore' },
    ],
    [
      'already issued',
      cr([approved, { type: 'Ready', status: 'True', reason: 'Issued' }]),
      neverLooked,
      { step: 'ignore' },
    ],
    [
      'issuer not found',
      cr([approved]),
      missing,
      {
        step: 'pending',
        reason: 'IssuerNotFound',
        message: 'Referenced "Issuer" not found: issuer.cert-manager.io "i" not found',
      },
    ],
    [
      'cluster issuer not found',
      cr([approved], { kind: 'ClusterIssuer' }),
      () => ({ notFound: 'clusterissuer.cert-manager.io "i" not found' }),
      {
        step: 'pending',
        reason: 'IssuerNotFound',
        message:
          'Referenced "ClusterIssuer" not found: clusterissuer.cert-manager.io "i" not found',
      },
    ],
    [
      'issuer not found, a ClusterIssuer of that name exists: what to set',
      cr([approved]),
      () => ({
        notFound: 'issuer.cert-manager.io "i" not found',
        otherKindExists: 'ClusterIssuer',
      }),
      {
        step: 'pending',
        reason: 'IssuerNotFound',
        message:
          'Referenced "Issuer" not found: issuer.cert-manager.io "i" not found; a ClusterIssuer of that name exists: set issuerRef.kind (a volume: csi.cert-manager.io/issuer-kind): ClusterIssuer',
      },
    ],
    [
      'cluster issuer not found, an Issuer of that name exists: what to set',
      cr([approved], { kind: 'ClusterIssuer' }),
      () => ({
        notFound: 'clusterissuer.cert-manager.io "i" not found',
        otherKindExists: 'Issuer',
      }),
      {
        step: 'pending',
        reason: 'IssuerNotFound',
        message:
          'Referenced "ClusterIssuer" not found: clusterissuer.cert-manager.io "i" not found; an Issuer of that name exists: set issuerRef.kind (a volume: csi.cert-manager.io/issuer-kind): Issuer',
      },
    ],
    [
      'issuer type missing',
      cr([approved]),
      found(readyIssuer({})),
      { step: 'pending', reason: 'IssuerTypeMissing', message: 'Missing issuer type' },
    ],
    [
      "another controller's type",
      cr([approved]),
      found(readyIssuer({ acme: {} })),
      { step: 'ignore' },
    ],
    [
      'issuer not ready',
      cr([approved]),
      found(readyIssuer({ ca: { secretName: 's' } }, false)),
      {
        step: 'pending',
        reason: 'IssuerNotReady',
        message: 'Referenced issuer does not have a Ready status condition',
      },
    ],
    [
      'certificate already set',
      cr([approved], { certificate: 'eA==' }),
      found(ca),
      { step: 'ignore' },
    ],
    ['sign', cr([approved]), found(ca), { step: 'sign', issuer: ca, issuerType: 'ca' }],
    [
      'pending requests are retried',
      cr([approved, { type: 'Ready', status: 'False', reason: 'Pending' }]),
      found(ca),
      { step: 'sign', issuer: ca, issuerType: 'ca' },
    ],
  ];
  for (const [name, request, lookup, expected] of cases) {
    t.same(planRequestSync(request, lookup, handlesOurs), expected, name);
  }
});

t.test('type-independent steps are taken by exactly one of the per-type controllers', async (t) => {
  // The CA controller beside a running SelfSigned one: responsible for CA issuers, for issuers
  // of types nobody here signs, and (as the first signer) for missing or untyped issuers.
  const running = ['ca', 'selfSigned'];
  const scopeOf = (own: string, first: boolean): SignerScope => ({
    handles: (type) => type === own,
    responsibleFor: (type) => type === own || (first && !running.includes(type ?? '')),
  });
  const ca = scopeOf('ca', true);
  const selfSigned = scopeOf('selfSigned', false);
  const denied = cr([{ type: 'Denied', status: 'True' }]);
  const unapproved = cr([]);
  const approved_ = cr([approved]);
  const caIssuer = found(readyIssuer({ ca: { secretName: 's' } }));
  const selfIssuer = found(readyIssuer({ selfSigned: {} }));
  const acme = found(readyIssuer({ acme: {} }));
  const untyped = found(readyIssuer({}));
  const cases: Array<[string, CertificateRequest, () => IssuerLookup, unknown, unknown]> = [
    ['denied, CA issuer', denied, caIssuer, { step: 'deny' }, { step: 'ignore' }],
    ['denied, SelfSigned issuer', denied, selfIssuer, { step: 'ignore' }, { step: 'deny' }],
    ['denied, issuer missing', denied, missing, { step: 'deny' }, { step: 'ignore' }],
    [
      'unapproved, CA issuer',
      unapproved,
      caIssuer,
      { step: 'waitForApproval' },
      { step: 'ignore' },
    ],
    [
      'unapproved, SelfSigned issuer',
      unapproved,
      selfIssuer,
      { step: 'ignore' },
      { step: 'waitForApproval' },
    ],
    ['unapproved, ACME issuer', unapproved, acme, { step: 'waitForApproval' }, { step: 'ignore' }],
    [
      'approved, issuer missing',
      approved_,
      missing,
      {
        step: 'pending',
        reason: 'IssuerNotFound',
        message: 'Referenced "Issuer" not found: issuer.cert-manager.io "i" not found',
      },
      { step: 'ignore' },
    ],
    [
      'approved, untyped issuer',
      approved_,
      untyped,
      { step: 'pending', reason: 'IssuerTypeMissing', message: 'Missing issuer type' },
      { step: 'ignore' },
    ],
    ['approved, ACME issuer', approved_, acme, { step: 'ignore' }, { step: 'ignore' }],
  ];
  for (const [name, request, lookup, byCA, bySelfSigned] of cases) {
    t.same(planRequestSync(request, lookup, ca), byCA, `${name}: CA controller`);
    t.same(
      planRequestSync(request, lookup, selfSigned),
      bySelfSigned,
      `${name}: SelfSigned controller`,
    );
  }
});
