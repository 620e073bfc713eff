import t from 'tap';
import {
  type ApprovalAuthority,
  aggregateMessage,
  certManagerAdmission,
} from '../../../src/admission/webhook/cert-manager-admission.js';
import type { SignerResource } from '../../../src/admission/webhook/signer-resources.js';
import type {
  AdmissionOperation,
  AdmissionRequest,
  GroupVersionResource,
} from '../../../src/api/admission-review.js';
import type { Condition } from '../../../src/api/conditions.js';
import type { KubeObject } from '../../../src/api/meta.js';
import type { ResourceAttributes } from '../../../src/api/subject-access-review.js';
import type { UserInfo } from '../../../src/api/user-info.js';
import { StoreError } from '../../../src/store/errors.js';
import {
  certificateRequest,
  certificateRequestFrom,
  withConditions,
  withCsr,
  withIssuerRef,
  withNamespace,
  withRequester,
  withSpec,
} from '../../support/builders/index.js';
import { keyAndCsr } from '../../support/issuer-fixtures.js';
import { importedUrl, moduleFileUrl } from '../../support/project-files.js';

const ALICE: UserInfo = {
  username: 'alice',
  uid: 'u-1',
  groups: ['developers', 'system:authenticated'],
  extra: { 'authentication.kubernetes.io/credential-id': ['JTI=1'] },
};

const { csrPem } = await keyAndCsr(
  { algorithm: 'ECDSA', size: 256 },
  { subject: { commonName: 'web' }, dnsNames: ['web.team.svc'] },
);

/** A CertificateRequest alice created (identity set) for the namespace's CA Issuer. */
const web1 = certificateRequest(
  'web-1',
  withNamespace('team'),
  withCsr(csrPem),
  withIssuerRef({ name: 'ca', kind: 'Issuer', group: 'cert-manager.io' }),
  withRequester({
    username: 'alice',
    uid: 'u-1',
    groups: ['developers', 'system:authenticated'],
    extra: { 'authentication.kubernetes.io/credential-id': ['JTI=1'] },
  }),
);

const approved: Condition = { type: 'Approved', status: 'True', reason: 'ok', message: 'fine' };
const denied: Condition = { type: 'Denied', status: 'True', reason: 'no', message: 'nope' };
const ready: Condition = { type: 'Ready', status: 'False', reason: 'Pending', message: 'waiting' };

const gvr = (resource: string): GroupVersionResource => ({
  group: 'cert-manager.io',
  version: 'v1',
  resource,
});

function review(
  operation: AdmissionOperation,
  resource: string,
  object: KubeObject | undefined,
  old?: KubeObject,
  subResource?: string,
): AdmissionRequest {
  return {
    uid: 'review-1',
    resource: gvr(resource),
    requestResource: gvr(resource),
    ...(subResource ? { subResource, requestSubResource: subResource } : {}),
    name: object?.metadata.name ?? 'x',
    namespace: 'team',
    operation,
    userInfo: ALICE,
    ...(object ? { object } : {}),
    ...(old ? { oldObject: old } : {}),
  };
}

/** Discovery and SubjectAccessReviews as given, recording what was asked. */
function authority(
  options: {
    resource?: SignerResource | undefined | Error;
    allow?: (name: string) => boolean | Error;
  } = {},
) {
  const resolved: string[] = [];
  const reviews: Array<[UserInfo, ResourceAttributes]> = [];
  const value: ApprovalAuthority = {
    signerResources: {
      async resolve(group, kind) {
        resolved.push(`${kind}.${group}`);
        const resource =
          'resource' in options
            ? options.resource
            : { signerResource: 'issuers.cert-manager.io', namespaced: true };
        if (resource instanceof Error) throw resource;
        return resource;
      },
    },
    async reviewAccess(user, attributes) {
      reviews.push([user, attributes]);
      const answer = options.allow?.(attributes.name ?? '') ?? false;
      if (answer instanceof Error) throw answer;
      return answer;
    },
  };
  return { value, resolved, reviews };
}

const refused = (message: string) => ({
  allowed: false,
  code: 406,
  reason: 'NotAcceptable',
  message,
});

t.test('CertificateRequest CREATE: the requester must be the one recorded', async (t) => {
  const { validate } = certManagerAdmission(authority().value);
  t.same(await validate(review('CREATE', 'certificaterequests', certificateRequestFrom(web1))), {
    allowed: true,
  });
  const forged = certificateRequestFrom(
    web1,
    withRequester({ username: 'admin', groups: ['system:masters'] }),
  );
  t.same(
    await validate(review('CREATE', 'certificaterequests', forged)),
    refused(
      '[spec.username: Forbidden: username identity must be that of the requester, spec.groups: Forbidden: groups identity must be that of the requester]',
    ),
    'both fields named, in one aggregate',
  );
  const invalid = certificateRequestFrom(
    web1,
    withSpec({ username: 'mallory', issuerRef: { name: '', kind: 'Bogus' } }),
  );
  const answer = await validate(review('CREATE', 'certificaterequests', invalid));
  t.match(answer, { allowed: false, code: 406 });
  const message = 'message' in answer ? answer.message : '';
  t.ok(
    message.indexOf('spec.username') < message.indexOf('spec.issuerRef.name'),
    `identity before validation, as cert-manager's plugin order: ${message}`,
  );
  t.match(
    message,
    'spec.issuerRef.kind: Invalid value: "Bogus": must be one of Issuer or ClusterIssuer',
  );
});

t.test('CertificateRequest UPDATE: spec and identity are immutable', async (t) => {
  const { validate } = certManagerAdmission(authority().value);
  const old = certificateRequestFrom(web1);
  t.same(
    await validate(
      review(
        'UPDATE',
        'certificaterequests',
        { ...old, metadata: { ...old.metadata, labels: { a: 'b' } } },
        old,
      ),
    ),
    { allowed: true },
    'labels may change',
  );
  const respecified = { ...old, spec: { ...old.spec, duration: '1h' } };
  t.same(
    await validate(review('UPDATE', 'certificaterequests', respecified, old)),
    refused('spec: Forbidden: cannot change spec after creation'),
  );
  const renamed = { ...old, spec: { ...old.spec, username: 'bob' } };
  t.same(
    await validate(review('UPDATE', 'certificaterequests', renamed, old)),
    refused(
      '[spec.username: Forbidden: username identity cannot be changed once set, spec: Forbidden: cannot change spec after creation]',
    ),
  );
});

t.test(
  'a status write adding Approved or Denied asks SubjectAccessReviews, wildcard first',
  async (t) => {
    const old = certificateRequestFrom(web1, withConditions([ready]));
    const approving = certificateRequestFrom(web1, withConditions([ready, approved]));
    const wildcard = authority({ allow: (name) => name === 'issuers.cert-manager.io/*' });
    t.same(
      await certManagerAdmission(wildcard.value).validate(
        review('UPDATE', 'certificaterequests', approving, old, 'status'),
      ),
      { allowed: true },
    );
    t.same(wildcard.resolved, ['Issuer.cert-manager.io']);
    t.same(
      wildcard.reviews,
      [
        [
          ALICE,
          {
            verb: 'approve',
            group: 'cert-manager.io',
            resource: 'signers',
            version: '*',
            name: 'issuers.cert-manager.io/*',
          },
        ],
      ],
      "the requester's full identity, the wildcard name, no namespace",
    );

    const exact = authority({ allow: (name) => name === 'issuers.cert-manager.io/team.ca' });
    t.same(
      await certManagerAdmission(exact.value).validate(
        review(
          'UPDATE',
          'certificaterequests',
          certificateRequestFrom(web1, withConditions([denied])),
          old,
          'status',
        ),
      ),
      { allowed: true },
      'Denied too',
    );
    t.same(
      exact.reviews.map(([, a]) => a.name),
      ['issuers.cert-manager.io/*', 'issuers.cert-manager.io/team.ca'],
    );

    const nobody = authority();
    t.same(
      await certManagerAdmission(nobody.value).validate(
        review('UPDATE', 'certificaterequests', approving, old, 'status'),
      ),
      refused(
        'status.conditions: Forbidden: user "alice" does not have permissions to set approved/denied conditions for issuer {ca Issuer cert-manager.io}',
      ),
    );
    t.equal(nobody.reviews.length, 2, 'both names asked');
  },
);

t.test(
  'a ClusterIssuer is named without namespace; defaults fill an empty issuerRef',
  async (t) => {
    const cluster = authority({
      resource: { signerResource: 'clusterissuers.cert-manager.io', namespaced: false },
      allow: (name) => name === 'clusterissuers.cert-manager.io/root',
    });
    const old = certificateRequestFrom(
      web1,
      withIssuerRef({ name: 'root', kind: 'ClusterIssuer', group: 'cert-manager.io' }),
    );
    const approving = certificateRequestFrom(
      web1,
      withIssuerRef({ name: 'root', kind: 'ClusterIssuer', group: 'cert-manager.io' }),
      withConditions([approved]),
    );
    t.same(
      await certManagerAdmission(cluster.value).validate(
        review('UPDATE', 'certificaterequests', approving, old, 'status'),
      ),
      { allowed: true },
    );
    t.same(
      cluster.reviews.map(([, a]) => a.name),
      ['clusterissuers.cert-manager.io/*', 'clusterissuers.cert-manager.io/root'],
    );
    const bare = authority({ allow: () => true });
    await certManagerAdmission(bare.value).validate(
      review(
        'UPDATE',
        'certificaterequests',
        certificateRequestFrom(web1, withIssuerRef({ name: 'ca' }), withConditions([approved])),
        certificateRequestFrom(web1, withIssuerRef({ name: 'ca' })),
        'status',
      ),
    );
    t.same(bare.resolved, ['Issuer.cert-manager.io'], 'kind Issuer, group cert-manager.io');
  },
);

t.test('an unknown issuer kind, a failed discovery and a failed review refuse', async (t) => {
  const old = certificateRequestFrom(
    web1,
    withIssuerRef({ name: 'vault', kind: 'VaultIssuer', group: 'example.com' }),
  );
  const approving = certificateRequestFrom(
    web1,
    withIssuerRef({ name: 'vault', kind: 'VaultIssuer', group: 'example.com' }),
    withConditions([approved]),
  );
  const unknown = authority({ resource: undefined });
  t.same(
    await certManagerAdmission(unknown.value).validate(
      review('UPDATE', 'certificaterequests', approving, old, 'status'),
    ),
    refused(
      'spec.issuerRef: Forbidden: referenced signer resource does not exist: {vault VaultIssuer example.com}',
    ),
  );
  t.same(unknown.reviews, [], 'no review without a resource');
  const broken = authority({
    resource: new StoreError('InternalError', 'list API groups: HTTP 503'),
  });
  t.same(
    await certManagerAdmission(broken.value).validate(
      review('UPDATE', 'certificaterequests', approving, old, 'status'),
    ),
    refused("failed to look up the issuer's resource: list API groups: HTTP 503"),
  );
  // Not the API server's answer but a fault of ours: no message of it reaches the client; the
  // server answers an internal error (admission-server.test.ts).
  const faulty = authority({ resource: new TypeError('Cannot read properties of undefined') });
  await t.rejects(
    certManagerAdmission(faulty.value).validate(
      review('UPDATE', 'certificaterequests', approving, old, 'status'),
    ),
    TypeError,
  );
  const failing = authority({ allow: () => new Error('create subjectaccessreviews: forbidden') });
  t.match(
    await certManagerAdmission(failing.value).validate(
      review(
        'UPDATE',
        'certificaterequests',
        certificateRequestFrom(web1, withConditions([approved])),
        certificateRequestFrom(web1),
        'status',
      ),
    ),
    { allowed: false, message: /does not have permissions/ },
    'a review that fails is a deny',
  );
  t.equal(failing.reviews.length, 1, 'and nothing more is asked');
});

t.test('no SubjectAccessReview unless Approved or Denied is newly added on status', async (t) => {
  const asked = authority({ allow: () => true });
  const { validate } = certManagerAdmission(asked.value);
  const old = certificateRequestFrom(web1, withConditions([approved]));
  t.same(
    await validate(
      review(
        'UPDATE',
        'certificaterequests',
        certificateRequestFrom(web1, withConditions([approved, ready])),
        old,
        'status',
      ),
    ),
    { allowed: true },
    'Ready added',
  );
  t.same(
    await validate(
      review(
        'UPDATE',
        'certificaterequests',
        certificateRequestFrom(web1, withConditions([approved])),
        certificateRequestFrom(web1),
        undefined,
      ),
    ),
    { allowed: true },
    'an object update (the API server keeps status)',
  );
  t.same(asked.resolved, []);
  t.same(asked.reviews, []);
  const changed = await validate(
    review(
      'UPDATE',
      'certificaterequests',
      certificateRequestFrom(web1, withConditions([{ ...approved, reason: 'other' }, denied])),
      old,
      'status',
    ),
  );
  t.match(
    changed,
    {
      allowed: false,
      message:
        "[status.conditions: Forbidden: 'Approved' condition may not be modified once set, status.conditions: Forbidden: both 'Denied' and 'Approved' conditions cannot coexist]",
    },
    'the rules still refuse; the approver was allowed to add Denied',
  );
  t.equal(asked.reviews.length, 1, 'Denied is new: asked once (wildcard allowed)');
});

t.test('approval errors come first, then identity, then validation', async (t) => {
  const { validate } = certManagerAdmission(authority().value);
  const old = certificateRequestFrom(web1);
  const next = certificateRequestFrom(
    web1,
    withConditions([approved]),
    withRequester({ username: 'bob' }),
  );
  const answer = await validate(review('UPDATE', 'certificaterequests', next, old, 'status'));
  const message = 'message' in answer ? answer.message : '';
  const order = ['status.conditions: Forbidden: user', 'spec.username:', 'spec: Forbidden'].map(
    (m) => message.indexOf(m),
  );
  t.ok(
    order.every((at, i) => at >= 0 && (i === 0 || at > (order[i - 1] as number))),
    message,
  );
});

t.test('Certificates, Issuers and ClusterIssuers are validated on CREATE and UPDATE', async (t) => {
  const { validate } = certManagerAdmission(authority().value);
  const certificate = {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name: 'web', namespace: 'team' },
    spec: { secretName: 'web-tls', commonName: 'web', issuerRef: { name: 'ca' } },
  };
  t.same(await validate(review('CREATE', 'certificates', certificate)), { allowed: true });
  const bad = { ...certificate, spec: { ...certificate.spec, secretName: '', duration: '10m' } };
  for (const operation of ['CREATE', 'UPDATE'] as const) {
    const answer = await validate(review(operation, 'certificates', bad, certificate));
    t.match(
      answer,
      { allowed: false, code: 406, message: /spec\.secretName: Required value: must be specified/ },
      operation,
    );
    t.match(answer, {
      message:
        /spec\.duration: Invalid value: 10m0s: certificate duration must be greater than 1h0m0s/,
    });
  }
  const specless = { ...certificate, spec: undefined } as unknown as KubeObject;
  t.match(
    await validate(review('CREATE', 'certificates', specless)),
    { allowed: false, message: /spec\.secretName: Required value: must be specified/ },
    'no spec: validated as an empty one',
  );
  for (const resource of ['issuers', 'clusterissuers']) {
    const issuer = {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name: 'x' },
      spec: {},
    };
    t.same(
      await validate(review('CREATE', resource, issuer)),
      refused('spec: Required value: at least one issuer must be configured'),
      resource,
    );
    const selfSigned = { ...issuer, spec: { selfSigned: {} } };
    t.same(await validate(review('UPDATE', resource, selfSigned, issuer)), { allowed: true });
  }
});

t.test('other resources, DELETE and CONNECT pass unchecked', async (t) => {
  const asked = authority();
  const { validate, mutate } = certManagerAdmission(asked.value);
  const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } };
  t.same(
    await validate({
      ...review('CREATE', 'secrets', secret),
      resource: { group: '', version: 'v1', resource: 'secrets' },
      requestResource: { group: '', version: 'v1', resource: 'secrets' },
    }),
    { allowed: true },
  );
  t.same(
    await validate(review('CREATE', 'orders', secret)),
    { allowed: true },
    'a cert-manager.io resource it does not know',
  );
  t.same(
    await validate(
      review('DELETE', 'certificaterequests', undefined, certificateRequestFrom(web1)),
    ),
    {
      allowed: true,
    },
  );
  t.same(await validate(review('CONNECT', 'certificates', undefined)), { allowed: true });
  t.same(
    await mutate(review('CREATE', 'certificates', secret)),
    { allowed: true },
    'only requests are mutated',
  );
  t.same(
    await mutate(
      review(
        'UPDATE',
        'certificaterequests',
        certificateRequestFrom(web1),
        certificateRequestFrom(web1),
      ),
    ),
    { allowed: true },
    'only at create',
  );
  t.same(asked.resolved, []);
});

t.test('the resource the client wrote to decides; resource alone is enough', async (t) => {
  const { validate } = certManagerAdmission(authority().value);
  const forged = certificateRequestFrom(web1, withRequester({ username: 'admin' }));
  const { requestResource: _r, ...withoutRequestResource } = review(
    'CREATE',
    'certificaterequests',
    forged,
  );
  t.match(await validate(withoutRequestResource), { allowed: false, message: /username identity/ });
});

t.test('an object the rules cannot read is a 400, as one cert-manager cannot decode', async (t) => {
  const { validate } = certManagerAdmission(authority().value);
  const malformed = {
    ...certificateRequestFrom(web1),
    spec: { ...certificateRequestFrom(web1).spec, usages: 5 },
  } as unknown as KubeObject;
  t.same(await validate(review('CREATE', 'certificaterequests', malformed)), {
    allowed: false,
    code: 400,
    reason: 'BadRequest',
    message: 'request.object.spec.usages must be a list of strings, got a number',
  });
});

t.test('every field the rules read is checked for its type first, and named', async (t) => {
  const { validate, mutate } = certManagerAdmission(authority().value);
  const certificate = (spec: unknown, metadata: unknown = { name: 'web', namespace: 'team' }) =>
    ({ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata, spec }) as KubeObject;
  const good = { secretName: 'web-tls', commonName: 'web', issuerRef: { name: 'ca' } };
  const issuer = (spec: unknown) =>
    ({
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name: 'ca' },
      spec,
    }) as KubeObject;
  const requestWithSpec = (spec: unknown) =>
    ({ ...certificateRequestFrom(web1), spec }) as unknown as KubeObject;
  const requestWithStatus = (status: unknown) =>
    ({ ...certificateRequestFrom(web1), status }) as unknown as KubeObject;
  const cases: Array<[string, AdmissionRequest, string]> = [
    [
      'a Certificate spec that is text',
      review('CREATE', 'certificates', certificate('web')),
      'request.object.spec must be an object, got a string',
    ],
    [
      'dnsNames as one string',
      review('CREATE', 'certificates', certificate({ ...good, dnsNames: 'a,b' })),
      'request.object.spec.dnsNames must be a list of strings, got a string',
    ],
    [
      'a number among the emailAddresses',
      review('CREATE', 'certificates', certificate({ ...good, emailAddresses: ['a@b', 'c@d', 7] })),
      'request.object.spec.emailAddresses[2] must be a string, got a number',
    ],
    [
      'a key size in quotes',
      review('CREATE', 'certificates', certificate({ ...good, privateKey: { size: '2048' } })),
      'request.object.spec.privateKey.size must be a whole number, got a string',
    ],
    [
      'a keystore flag as text',
      review(
        'CREATE',
        'certificates',
        certificate({ ...good, keystores: { jks: { create: 'yes' } } }),
      ),
      'request.object.spec.keystores.jks.create must be a boolean, got a string',
    ],
    [
      'annotations of the Secret template that are no strings',
      review(
        'CREATE',
        'certificates',
        certificate({ ...good, secretTemplate: { annotations: { a: { b: 1 } } } }),
      ),
      'request.object.spec.secretTemplate.annotations["a"] must be a string, got an object',
    ],
    [
      'the old object of an update',
      review('UPDATE', 'certificates', certificate(good), certificate({ ...good, uris: [[]] })),
      'request.oldObject.spec.uris[0] must be a string, got a list',
    ],
    [
      'metadata labels that are a list',
      review('CREATE', 'certificates', certificate(good, { name: 'web', labels: ['a'] })),
      'request.object.metadata.labels must be an object of strings, got a list',
    ],
    [
      'an Issuer whose CA is a list',
      review('CREATE', 'issuers', issuer({ ca: [] })),
      'request.object.spec.ca must be an object, got a list',
    ],
    [
      'OCSP servers as text',
      review(
        'CREATE',
        'clusterissuers',
        issuer({ ca: { secretName: 'x', ocspServers: 'http://o' } }),
      ),
      'request.object.spec.ca.ocspServers must be a list of strings, got a string',
    ],
    [
      'an ACME issuer that is true',
      review('CREATE', 'issuers', issuer({ acme: true })),
      'request.object.spec.acme must be an object, got a boolean',
    ],
    [
      'extra values that are not lists',
      review(
        'CREATE',
        'certificaterequests',
        requestWithSpec({ ...certificateRequestFrom(web1).spec, extra: { k: 'v' } }),
      ),
      'request.object.spec.extra["k"] must be a list of strings, got a string',
    ],
    [
      'a condition status that is a number',
      review(
        'UPDATE',
        'certificaterequests',
        requestWithStatus({ conditions: [{ type: 'Approved', status: 1 }] }),
        certificateRequestFrom(web1),
        'status',
      ),
      'request.object.status.conditions[0].status must be a string, got a number',
    ],
    [
      'an isCA that is text',
      review(
        'CREATE',
        'certificaterequests',
        requestWithSpec({ ...certificateRequestFrom(web1).spec, isCA: 'true' }),
      ),
      'request.object.spec.isCA must be a boolean, got a string',
    ],
  ];
  for (const [what, review, message] of cases) {
    t.same(
      await validate(review),
      { allowed: false, code: 400, reason: 'BadRequest', message },
      what,
    );
  }
  // The mutating endpoint reads only the identity fields, whatever their type, and replaces them.
  t.match(await mutate(review('CREATE', 'certificaterequests', requestWithSpec({ username: 5 }))), {
    allowed: true,
    patch: [{ op: 'add', path: '/spec/uid' }],
  });
});

t.test('a null field is an absent one, as in Go: no crash, the rules as without it', async (t) => {
  const { validate } = certManagerAdmission(authority().value);
  const certificate = {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name: 'web', namespace: 'team', annotations: null },
    spec: {
      secretName: 'web-tls',
      commonName: 'web',
      issuerRef: { name: 'ca', kind: null },
      dnsNames: null,
      duration: null,
      privateKey: { rotationPolicy: null, encoding: null, size: null },
      renewBeforePercentage: null,
      secretTemplate: null,
    },
  } as unknown as KubeObject;
  t.same(await validate(review('CREATE', 'certificates', certificate)), { allowed: true });
  const nullType = {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Issuer',
    metadata: { name: 'ca' },
    spec: { ca: null, selfSigned: {} },
  } as unknown as KubeObject;
  t.same(await validate(review('CREATE', 'issuers', nullType)), { allowed: true }, 'ca: null');
});

t.test('a request without spec still gets the approval check (issuerRef defaulted)', async (t) => {
  const asked = authority({ allow: () => false });
  const { validate } = certManagerAdmission(asked.value);
  const { spec: _s, ...specless } = certificateRequestFrom(web1, withConditions([approved]));
  const { spec: _o, ...oldSpecless } = certificateRequestFrom(web1);
  const answer = await validate(
    review(
      'UPDATE',
      'certificaterequests',
      specless as KubeObject,
      oldSpecless as KubeObject,
      'status',
    ),
  );
  t.match(answer, {
    allowed: false,
    message: /does not have permissions to set approved\/denied conditions for issuer \{ {2}\}/,
  });
  t.same(asked.resolved, ['Issuer.cert-manager.io']);
});

t.test('a review without the object its operation needs is a 400', async (t) => {
  const { validate, mutate } = certManagerAdmission(authority().value);
  const badRequest = (message: string) => ({
    allowed: false,
    code: 400,
    reason: 'BadRequest',
    message,
  });
  t.same(
    await validate(review('CREATE', 'certificaterequests', undefined)),
    badRequest('request.object is missing for CREATE'),
  );
  t.same(
    await validate(review('UPDATE', 'certificates', certificateRequestFrom(web1))),
    badRequest('request.oldObject is missing for UPDATE'),
  );
  t.same(
    await mutate(review('CREATE', 'certificaterequests', undefined)),
    badRequest('request.object is missing for CREATE'),
  );
});

t.test(
  'CertificateRequest CREATE is patched with the requester, forged values replaced',
  async (t) => {
    const { mutate } = certManagerAdmission(authority().value);
    const bare = certificateRequest(
      'web-1',
      withNamespace('team'),
      withCsr(csrPem),
      withIssuerRef({ name: 'ca' }),
    );
    t.same(await mutate(review('CREATE', 'certificaterequests', bare)), {
      allowed: true,
      patch: [
        { op: 'add', path: '/spec/uid', value: 'u-1' },
        { op: 'add', path: '/spec/username', value: 'alice' },
        { op: 'add', path: '/spec/groups', value: ['developers', 'system:authenticated'] },
        { op: 'add', path: '/spec/extra', value: ALICE.extra },
      ],
    });
    const forged = {
      ...bare,
      spec: { ...bare.spec, username: 'admin', groups: ['system:masters'] },
    };
    const answer = await mutate(review('CREATE', 'certificaterequests', forged));
    t.match(answer, {
      allowed: true,
      patch: [
        { op: 'add', path: '/spec/uid' },
        { op: 'replace', path: '/spec/username', value: 'alice' },
        { op: 'replace', path: '/spec/groups', value: ['developers', 'system:authenticated'] },
        { op: 'add', path: '/spec/extra' },
      ],
    });
    t.same(
      await mutate(review('CREATE', 'certificaterequests', certificateRequestFrom(web1))),
      { allowed: true, patch: [] },
      'nothing to change',
    );
  },
);

t.test(
  'several errors read as an apimachinery aggregate: one alone, several bracketed, no repeats',
  async (t) => {
    t.equal(aggregateMessage(['a: x']), 'a: x');
    t.equal(aggregateMessage(['a: x', 'b: y', 'a: x']), '[a: x, b: y]');
    t.equal(aggregateMessage(['a: x', 'a: x']), 'a: x', 'duplicates of one error are one error');
    const many = Array.from(
      { length: 1_000 },
      (_, i) => `spec.f${i}: Invalid value: ${'v'.repeat(80)}`,
    );
    const capped = aggregateMessage(many);
    t.ok(Buffer.byteLength(capped) <= 16 * 1024, 'cut at 16 KiB');
    t.match(capped, /^\[spec\.f0: .*…\(\d+ more bytes left out\)$/);
  },
);

t.test('a rule that fails unexpectedly is thrown on, for the server to answer 500', async (t) => {
  const validation = await import('../../../src/certificates/certificate-validation.js');
  const identity = await import('../../../src/admission/requester-identity.js');
  const { certManagerAdmission: mocked } = await t.mockImport<
    typeof import('../../../src/admission/webhook/cert-manager-admission.js')
  >(moduleFileUrl('src/admission/webhook/cert-manager-admission.ts'), {
    [importedUrl('src/certificates/certificate-validation.ts')]: {
      ...validation,
      validateCertificateSpec: () => {
        throw new TypeError('x.entries is not a function');
      },
    },
    [importedUrl('src/admission/requester-identity.ts')]: {
      ...identity,
      requesterIdentityPatch: () => {
        throw new RangeError('Maximum call stack size exceeded');
      },
    },
  });
  const { validate, mutate } = mocked(authority().value);
  const certificate = {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name: 'web' },
    spec: {},
  } as KubeObject;
  await t.rejects(validate(review('CREATE', 'certificates', certificate)), TypeError);
  await t.rejects(
    mutate(review('CREATE', 'certificaterequests', certificateRequestFrom(web1))),
    RangeError,
  );
});
