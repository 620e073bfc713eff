import t from 'tap';
import {
  csrApprovalWrite,
  csrSpecChangeErrors,
  csrSpecErrors,
  csrStatusErrors,
  csrStatusWrite,
  csrUpdate,
  validateCsrCreate,
  withCsrRequester,
} from '../../src/admission/certificate-signing-request-rules.js';
import { encodeBytes } from '../../src/api/certificate-request.js';
import {
  type CertificateSigningRequest,
  CertificateSigningRequestKind,
  type CsrCondition,
} from '../../src/api/certificate-signing-request.js';
import type { KubeObject } from '../../src/api/meta.js';
import { embeddedAdmission } from '../../src/cli/node/embedded-admission.js';
import { encodePem } from '../../src/pki/pem.js';
import { csrObject, keyedCsr } from '../support/csr-fixtures.js';
import { makeCA } from '../support/issuer-fixtures.js';

const SIGNER = 'clusterissuers.cert-manager.io/ca';
const NOW = new Date('2026-03-01T10:00:00Z');
const { csrPem } = await keyedCsr();
const ca = await makeCA();
const approved: CsrCondition = {
  type: 'Approved',
  status: 'True',
  reason: 'R',
  lastUpdateTime: '2026-01-01T00:00:00Z',
  lastTransitionTime: '2026-01-01T00:00:00Z',
};

function stored(conditions: CsrCondition[] = [], certificate?: string): CertificateSigningRequest {
  return {
    ...csrObject('c', SIGNER, csrPem, { username: 'alice' }),
    status: { conditions, ...(certificate ? { certificate } : {}) },
  };
}

function written(
  base: CertificateSigningRequest,
  conditions: CsrCondition[],
  certificate?: string,
): CertificateSigningRequest {
  return { ...base, status: { conditions, ...(certificate ? { certificate } : {}) } };
}

t.test(
  'create: the requester is recorded, whatever the request said, and status wiped',
  async (t) => {
    const forged = csrObject('c', SIGNER, csrPem, { username: 'system:admin' });
    forged.spec.groups = ['system:masters'];
    forged.spec.uid = 'forged';
    forged.spec.extra = { x: ['y'] };
    forged.status = { conditions: [approved], certificate: encodeBytes(ca.certificatePem) };
    const prepared = withCsrRequester(forged, {
      username: 'bob',
      groups: ['devs', 'system:authenticated'],
    });
    t.same(
      { ...prepared.spec, request: '' },
      {
        request: '',
        signerName: SIGNER,
        usages: ['digital signature', 'key encipherment'],
        username: 'bob',
        groups: ['devs', 'system:authenticated'],
      },
      'uid and extra dropped, username and groups replaced',
    );
    t.equal(prepared.status, undefined, 'no pre-approved request');
    t.same(
      withCsrRequester(forged, { username: 'sa', uid: 'u-1', extra: { scopes: ['a'] } }).spec.extra,
      { scopes: ['a'] },
    );
    t.same(await validateCsrCreate(prepared), [], 'a valid request');
  },
);

t.test('create validation: request, usages, signer name, expirationSeconds', async (t) => {
  const base = csrObject('c', SIGNER, csrPem);
  const errors = async (spec: Partial<CertificateSigningRequest['spec']>) =>
    validateCsrCreate({ ...base, spec: { ...base.spec, ...spec } });
  t.match(await errors({ request: encodeBytes(ca.certificatePem) }), [
    /^spec\.request: Invalid value: \[\]byte\{0x2d, 0x2d.*: PEM block type must be CERTIFICATE REQUEST$/,
  ]);
  t.match(await errors({ request: 'not base64!' }), [
    /^spec\.request: Invalid value: .*: must be base64-encoded bytes$/,
  ]);
  // A flipped bit in the signature: the PEM parses, the signature does not verify.
  const der = Buffer.from(csrPem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
  der[der.length - 3] = (der[der.length - 3] ?? 0) ^ 1;
  const tampered = encodePem('CERTIFICATE REQUEST', der);
  t.match(await errors({ request: encodeBytes(tampered) }), [/^spec\.request: Invalid value: /]);
  t.same(await errors({ usages: [] }), ['spec.usages: Required value: usages must be provided']);
  t.match(await errors({ usages: ['server auth', 'frobnicate', 'server auth'] }), [
    /^spec\.usages\[1\]: Unsupported value: "frobnicate": supported values: "any", "cert sign", /,
    'spec.usages[2]: Duplicate value: "server auth"',
  ]);
  t.same(await errors({ signerName: '' }), [
    'spec.signerName: Required value: signerName must be provided',
  ]);
  t.same(await errors({ signerName: 'kubernetes.io/legacy-unknown' }), [
    'spec.signerName: Invalid value: "kubernetes.io/legacy-unknown": the legacy signerName is not allowed via this API version',
  ]);
  t.match(await errors({ signerName: 'nodomain' }), [/fully qualified domain and path/]);
  t.same(await errors({ expirationSeconds: 599 }), [
    'spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)',
  ]);
  t.same(await errors({ expirationSeconds: 600 }), []);
});

function unstatused(csr: CertificateSigningRequest): CertificateSigningRequest {
  const { status: _status, ...rest } = csr;
  return rest;
}

t.test('a request without a spec is refused field by field, not crashed on', async (t) => {
  const bare = {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name: 'x' },
  } as CertificateSigningRequest;
  t.same(withCsrRequester(bare, { username: 'bob' }).spec, { username: 'bob' });
  t.match(await validateCsrCreate(bare), [
    /^spec\.request: Invalid value: \[\]byte\{\}: PEM block type must be CERTIFICATE REQUEST$/,
    'spec.usages: Required value: usages must be provided',
    'spec.signerName: Required value: signerName must be provided',
  ]);
  t.same(csrSpecChangeErrors(bare, bare), []);
  t.match(csrSpecChangeErrors(bare, stored()), ['spec: Invalid value: {}: field is immutable']);
  const csr = stored();
  t.same(csrStatusWrite(unstatused(csr), unstatused(csr), NOW), {
    object: { ...unstatused(csr), status: { conditions: [] } },
    errors: [],
  });
  t.same(csrApprovalWrite(unstatused(csr), unstatused(csr), NOW).errors, []);
  t.same(
    csrApprovalWrite(
      written(csr, [{ reason: 'no type, no status' } as unknown as CsrCondition]),
      csr,
      NOW,
    ).errors,
    ['status.conditions[0].type: Required value', 'status.conditions[0].status: Required value'],
  );
});

t.test('update of the object: spec and status stay as stored', async (t) => {
  const old = stored([approved]);
  const next = csrUpdate(
    {
      ...old,
      metadata: { ...old.metadata, labels: { a: 'b' } },
      spec: { ...old.spec, signerName: 'example.com/other', username: 'mallory' },
      status: { conditions: [] },
    },
    old,
  );
  t.same(next.spec, old.spec);
  t.same(next.status, old.status);
  t.same(next.metadata.labels, { a: 'b' });
  t.same(csrUpdate({ ...old, status: { conditions: [] } }, unstatused(old)).status, undefined);
});

t.test('status writes: a certificate once, no approval, times filled in', async (t) => {
  const old = stored([approved]);
  const chain = encodeBytes(ca.certificatePem);
  const failed: CsrCondition = { type: 'Failed', status: 'True', reason: 'X', message: 'm' };
  const issued = csrStatusWrite(
    written({ ...old, spec: { ...old.spec, username: 'x' } }, [approved], chain),
    old,
    NOW,
  );
  t.same(issued.errors, []);
  t.equal(issued.object.status?.certificate, chain);
  t.equal(issued.object.spec.username, 'alice', 'spec from storage');
  const withFailed = csrStatusWrite(written(old, [approved, failed]), old, NOW);
  t.same(withFailed.errors, []);
  t.match(withFailed.object.status?.conditions?.[1], {
    lastUpdateTime: '2026-03-01T10:00:00Z',
    lastTransitionTime: '2026-03-01T10:00:00Z',
  });
  const changedApproval = csrStatusWrite(
    written(old, [{ ...approved, message: 'edited' }]),
    old,
    NOW,
  );
  t.same(changedApproval.errors, [], 'a changed Approved is put back, not refused');
  t.same(changedApproval.object.status?.conditions, [approved]);
  t.same(csrStatusWrite(written(stored(), [{ ...approved }]), stored(), NOW).errors, [
    'status.conditions: Forbidden: updates may not add a condition of type "Approved"',
  ]);
  t.same(csrStatusWrite(written(old, []), old, NOW).errors, [
    'status.conditions: Forbidden: updates may not remove a condition of type "Approved"',
  ]);
  const set = stored([approved], chain);
  const other = encodeBytes((await makeCA()).certificatePem);
  t.same(csrStatusWrite(written(set, [approved], other), set, NOW).errors, [
    'status.certificate: Forbidden: updates may not modify existing certificate content',
  ]);
  t.same(
    csrStatusWrite(written(set, [approved]), set, NOW).errors,
    ['status.certificate: Forbidden: updates may not modify existing certificate content'],
    'nor removed',
  );
  t.same(csrStatusWrite(written(old, [approved], encodeBytes(csrPem)), old, NOW).errors, [
    'status.certificate: Invalid value: "<certificate data>": only CERTIFICATE PEM blocks are allowed, found "CERTIFICATE REQUEST"',
  ]);
  t.same(csrStatusWrite(written(old, [approved], encodeBytes('no pem')), old, NOW).errors, [
    'status.certificate: Invalid value: "<certificate data>": must contain at least one CERTIFICATE PEM block',
  ]);
  const withHeader = ca.certificatePem.replace(
    '-----BEGIN CERTIFICATE-----\n',
    '-----BEGIN CERTIFICATE-----\nProc-Type: 4,ENCRYPTED\n\n',
  );
  t.same(csrStatusWrite(written(old, [approved], encodeBytes(withHeader)), old, NOW).errors, [
    'status.certificate: Invalid value: "<certificate data>": no PEM block headers are permitted',
  ]);
  t.match(
    csrStatusWrite(
      written(
        old,
        [approved],
        encodeBytes('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'),
      ),
      old,
      NOW,
    ).errors,
    [/^status\.certificate: Invalid value: "<certificate data>": x509: /],
  );
  t.same(csrStatusWrite(written(old, [approved], 'no base64!'), old, NOW).errors, [
    'status.certificate: Invalid value: "<certificate data>": must be base64-encoded bytes',
  ]);
});

t.test('approval writes: conditions only, Approved and Denied exclusive, True only', async (t) => {
  const old = stored();
  const denied: CsrCondition = { type: 'Denied', status: 'True', reason: 'No' };
  const ok = csrApprovalWrite(
    {
      ...written(old, [{ type: 'Approved', status: 'True' }], encodeBytes('x')),
      spec: { ...old.spec, username: 'z' },
    },
    old,
    NOW,
  );
  t.same(ok.errors, []);
  t.equal(ok.object.status?.certificate, undefined, 'the certificate is not the approver’s');
  t.equal(ok.object.spec.username, 'alice');
  t.match(ok.object.status?.conditions, [
    {
      type: 'Approved',
      lastUpdateTime: '2026-03-01T10:00:00Z',
      lastTransitionTime: '2026-03-01T10:00:00Z',
    },
  ]);
  t.same(csrApprovalWrite(written(old, [approved, denied]), old, NOW).errors, [
    'status.conditions[1].type: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive',
  ]);
  t.same(csrApprovalWrite(written(old, [{ type: 'Approved', status: 'False' }]), old, NOW).errors, [
    'status.conditions[0].status: Unsupported value: "False": supported values: "True"',
  ]);
  t.same(csrApprovalWrite(written(old, [{ type: '', status: '' as 'True' }]), old, NOW).errors, [
    'status.conditions[0].type: Required value',
    'status.conditions[0].status: Required value',
  ]);
  t.same(
    csrApprovalWrite(
      written(old, [
        { type: 'Custom', status: 'Maybe' as 'True' },
        { type: 'Custom', status: 'False' },
      ]),
      old,
      NOW,
    ).errors,
    [
      'status.conditions[0].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"',
      'status.conditions[1].type: Duplicate value: "Custom"',
    ],
  );
  const both = stored([approved, denied]);
  t.same(
    csrApprovalWrite(written(both, [approved, denied]), both, NOW).errors,
    [],
    'stored data that already broke a rule is tolerated',
  );
  const kept = stored([{ ...approved, status: 'True' }]);
  t.equal(
    csrApprovalWrite(written(kept, [{ type: 'Approved', status: 'True' }]), kept, NOW).object.status
      ?.conditions?.[0]?.lastTransitionTime,
    approved.lastTransitionTime,
    'an unchanged condition keeps its transition time',
  );
});

t.test('embedded mode: the store runs the same rules; approval is a status write', async (t) => {
  const kind = CertificateSigningRequestKind;
  const csr = csrObject('c', SIGNER, csrPem);
  t.same(embeddedAdmission(kind, csr, undefined, 'create'), []);
  t.same(
    embeddedAdmission(
      kind,
      { ...csr, spec: { ...csr.spec, usages: [] } } as KubeObject,
      undefined,
      'create',
    ),
    ['spec.usages: Required value: usages must be provided'],
  );
  t.same(
    embeddedAdmission(kind, written(csr, [approved]), csr, 'status'),
    [],
    'approved by a status write',
  );
  t.same(
    embeddedAdmission(
      kind,
      written(csr, [approved, { type: 'Denied', status: 'True' }]),
      csr,
      'status',
    ),
    [
      'status.conditions[1].type: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive',
    ],
  );
  t.match(
    embeddedAdmission(
      kind,
      { ...csr, spec: { ...csr.spec, signerName: 'example.com/x' } } as KubeObject,
      csr,
      'update',
    ),
    [/^spec: Invalid value: .*: field is immutable$/],
  );
  t.same(
    csrSpecChangeErrors({ ...csr, metadata: { ...csr.metadata, labels: { a: 'b' } } }, csr),
    [],
  );
  t.same(csrSpecErrors(csr), []);
  t.same(csrStatusErrors(csr, csr, { approval: true, certificate: true }), []);
});

t.test('the status rules of each write path, on their own', async (t) => {
  const old = stored([approved]);
  t.same(
    csrStatusErrors(written(old, [{ ...approved, message: 'edited' }]), old, {
      approval: false,
      certificate: true,
    }),
    ['status.conditions: Forbidden: updates may not modify a condition of type "Approved"'],
  );
  t.same(
    csrStatusErrors(written(old, [approved], encodeBytes(ca.certificatePem)), old, {
      approval: true,
      certificate: false,
    }),
    ['status.certificate: Forbidden: updates may not set certificate content'],
  );
});

t.test('thousands of bad usages or conditions: ten errors per list and a count', async (t) => {
  const csr = csrObject('c', SIGNER, csrPem, { username: 'alice' });
  csr.spec.usages = [
    ...Array(3_000).fill('bogus'),
    ...Array(100_000).fill('digital signature'),
  ] as NonNullable<typeof csr.spec.usages>;
  const errors = csrSpecErrors(csr);
  t.equal(errors.length, 11);
  t.match(errors[0], /^spec\.usages\[0\]: Unsupported value: "bogus": supported values: /);
  t.equal(
    errors[10],
    'spec.usages: and 105988 more errors (only the first 10 are listed)',
    'unsupported ones and repeats (the first of each is no repeat), counted in one pass',
  );
  const old = stored();
  const conditions = Array.from({ length: 40 }, () => ({ ...approved, status: '' }));
  const statusErrors = csrStatusErrors(written(old, conditions as CsrCondition[]), old, {
    approval: true,
    certificate: true,
  });
  t.equal(statusErrors[0], 'status.conditions[0].status: Required value');
  t.ok(
    statusErrors.includes('status.conditions: and 69 more errors (only the first 10 are listed)'),
    statusErrors.join('\n'),
  );
});
