import t from 'tap';
import {
  requesterIdentityPatch,
  validateRequesterIdentity,
  validateRequesterIdentityUpdate,
} from '../../src/admission/requester-identity.js';
import type {
  CertificateRequest,
  CertificateRequestSpec,
} from '../../src/api/certificate-request.js';
import type { UserInfo } from '../../src/api/user-info.js';
import { applyJsonPatch } from '../fake-api-server/patch.js';
import {
  certificateRequest,
  certificateRequestFrom,
  withCsr,
  withIssuerRef,
  withNamespace,
  withRequester,
} from '../support/builders/index.js';

/** The request of the cases: in apps, for the Issuer ca, no identity yet. */
const web1 = certificateRequest(
  'web-1',
  withNamespace('apps'),
  withIssuerRef({ name: 'ca' }),
  withCsr('---'),
);

const aliceExtra = { scopes: ['read', 'write'], 'example.com/team': ['a'] };
const alice: UserInfo = {
  username: 'alice',
  uid: 'a-1',
  groups: ['devs', 'system:authenticated'],
  extra: aliceExtra,
};
const robot: UserInfo = { username: 'system:serviceaccount:apps:robot' };

/** The patch applied as the API server applies a mutating webhook's response. */
const patched = (cr: CertificateRequest, user: UserInfo) =>
  applyJsonPatch(cr, requesterIdentityPatch(cr, user)) as CertificateRequest;

t.test('the identity patch writes the requester into the spec, however it started', async (t) => {
  const cases: Array<[string, CertificateRequest, UserInfo, CertificateRequestSpec]> = [
    [
      'no identity fields yet',
      certificateRequestFrom(web1),
      alice,
      {
        request: 'LS0t',
        issuerRef: { name: 'ca' },
        uid: 'a-1',
        username: 'alice',
        groups: ['devs', 'system:authenticated'],
        extra: { scopes: ['read', 'write'], 'example.com/team': ['a'] },
      },
    ],
    [
      'forged fields are replaced, a forged extra removed for a user without extra',
      certificateRequestFrom(
        web1,
        withRequester({
          uid: 'x',
          username: 'admin',
          groups: ['system:masters'],
          extra: { scopes: ['all'] },
        }),
      ),
      robot,
      {
        request: 'LS0t',
        issuerRef: { name: 'ca' },
        uid: '',
        username: 'system:serviceaccount:apps:robot',
        groups: [],
      },
    ],
    [
      'a user without uid and groups: empty ones, as cert-manager writes them',
      certificateRequestFrom(web1),
      robot,
      {
        request: 'LS0t',
        issuerRef: { name: 'ca' },
        uid: '',
        username: 'system:serviceaccount:apps:robot',
        groups: [],
      },
    ],
  ];
  for (const [name, cr, user, spec] of cases) {
    const result = patched(cr, user);
    t.same(result, { ...cr, spec }, name);
    t.same(validateRequesterIdentity(result, user), [], `${name}: then it validates`);
    t.same(requesterIdentityPatch(result, user), [], `${name}: and a second patch is empty`);
  }
});

t.test('the patch touches only what differs, with the operation each field needs', async (t) => {
  t.same(
    requesterIdentityPatch(
      certificateRequestFrom(
        web1,
        withRequester({ uid: 'a-1', username: 'alice', groups: ['devs'], extra: aliceExtra }),
      ),
      alice,
    ),
    [{ op: 'replace', path: '/spec/groups', value: ['devs', 'system:authenticated'] }],
  );
  t.same(
    requesterIdentityPatch(
      certificateRequestFrom(web1, withRequester({ username: 'alice' })),
      alice,
    ),
    [
      { op: 'add', path: '/spec/uid', value: 'a-1' },
      { op: 'add', path: '/spec/groups', value: ['devs', 'system:authenticated'] },
      { op: 'add', path: '/spec/extra', value: aliceExtra },
    ],
  );
  t.same(requesterIdentityPatch(certificateRequestFrom(web1), { username: 'bob', extra: {} }), [
    { op: 'add', path: '/spec/uid', value: '' },
    { op: 'add', path: '/spec/username', value: 'bob' },
    { op: 'add', path: '/spec/groups', value: [] },
  ]);
  const patch = requesterIdentityPatch(certificateRequestFrom(web1), alice);
  const valueAt = (path: string) => patch.find((op) => op.path === path)?.value;
  (valueAt('/spec/groups') as string[]).push('system:masters');
  (valueAt('/spec/extra') as Record<string, string[]>).scopes?.push('admin');
  t.same(alice.groups, ['devs', 'system:authenticated'], 'the patch holds a copy of the groups');
  t.same(aliceExtra.scopes, ['read', 'write'], 'and of extra');

  const noSpec = {
    ...certificateRequestFrom(web1),
    spec: undefined,
  } as unknown as CertificateRequest;
  const withSpec = patched(noSpec, robot);
  t.same(
    withSpec.spec,
    { uid: '', username: 'system:serviceaccount:apps:robot', groups: [] },
    'a request without a spec gets one holding the identity',
  );
  const nullSpec = { ...certificateRequestFrom(web1), spec: null } as unknown as CertificateRequest;
  t.same(patched(nullSpec, robot).spec, withSpec.spec, 'a null spec is replaced');
});

t.test('create: each identity field must be the requester’s', async (t) => {
  const own = patched(certificateRequestFrom(web1), alice);
  t.same(
    validateRequesterIdentity(
      {
        ...own,
        spec: {
          ...own.spec,
          groups: ['system:authenticated', 'devs'],
          extra: { 'example.com/team': ['a'], scopes: ['write', 'read'] },
        },
      },
      alice,
    ),
    [],
    'groups and extra values in any order',
  );
  t.same(
    validateRequesterIdentity(
      certificateRequestFrom(web1, withRequester({ username: 'system:serviceaccount:apps:robot' })),
      robot,
    ),
    [],
    'absent uid, groups and extra are a user without them',
  );
  const forged: Array<[string, Partial<CertificateRequestSpec>, string]> = [
    ['uid', { uid: 'b-2' }, 'spec.uid: Forbidden: uid identity must be that of the requester'],
    [
      'username',
      { username: 'bob' },
      'spec.username: Forbidden: username identity must be that of the requester',
    ],
    [
      'a group more',
      { groups: ['devs', 'system:authenticated', 'system:masters'] },
      'spec.groups: Forbidden: groups identity must be that of the requester',
    ],
    [
      'a group twice instead of another',
      { groups: ['devs', 'devs'] },
      'spec.groups: Forbidden: groups identity must be that of the requester',
    ],
    [
      'an extra key less',
      { extra: { scopes: ['read', 'write'] } },
      'spec.extra: Forbidden: extra identity must be that of the requester',
    ],
    [
      'an extra key renamed',
      { extra: { scopes: ['read', 'write'], 'example.com/other': ['a'] } },
      'spec.extra: Forbidden: extra identity must be that of the requester',
    ],
    [
      'an extra value more',
      { extra: { scopes: ['read', 'write', 'admin'], 'example.com/team': ['a'] } },
      'spec.extra: Forbidden: extra identity must be that of the requester',
    ],
  ];
  for (const [name, change, error] of forged)
    t.same(
      validateRequesterIdentity({ ...own, spec: { ...own.spec, ...change } }, alice),
      [error],
      name,
    );
  t.same(
    validateRequesterIdentity(certificateRequestFrom(web1), alice),
    [
      'spec.uid: Forbidden: uid identity must be that of the requester',
      'spec.username: Forbidden: username identity must be that of the requester',
      'spec.groups: Forbidden: groups identity must be that of the requester',
      'spec.extra: Forbidden: extra identity must be that of the requester',
    ],
    'an unpatched request names all four',
  );
});

t.test('a request without spec has no identity', async (t) => {
  const bare = { metadata: { name: 'x' } } as unknown as CertificateRequest;
  t.same(validateRequesterIdentity(bare, { username: '' }), [], 'the empty user');
  t.same(validateRequesterIdentity(bare, robot), [
    'spec.username: Forbidden: username identity must be that of the requester',
  ]);
  t.same(validateRequesterIdentityUpdate(bare, bare), []);
  t.same(validateRequesterIdentityUpdate(patched(bare, alice), bare), [
    'spec.uid: Forbidden: uid identity cannot be changed once set',
    'spec.username: Forbidden: username identity cannot be changed once set',
    'spec.groups: Forbidden: groups identity cannot be changed once set',
    'spec.extra: Forbidden: extra identity cannot be changed once set',
  ]);
});

t.test('update: the identity never changes once set', async (t) => {
  const old = patched(certificateRequestFrom(web1), alice);
  t.same(validateRequesterIdentityUpdate(structuredClone(old), old), []);
  t.same(
    validateRequesterIdentityUpdate(
      { ...old, spec: { ...old.spec, groups: ['system:authenticated', 'devs'] } },
      old,
    ),
    [],
    'groups in another order are the same groups',
  );
  const changes: Array<[string, Partial<CertificateRequestSpec>, string]> = [
    ['uid', { uid: '' }, 'spec.uid: Forbidden: uid identity cannot be changed once set'],
    [
      'username',
      { username: 'bob' },
      'spec.username: Forbidden: username identity cannot be changed once set',
    ],
    [
      'groups',
      { groups: ['devs'] },
      'spec.groups: Forbidden: groups identity cannot be changed once set',
    ],
    [
      'extra values reordered (compared exactly, as reflect.DeepEqual does)',
      { extra: { scopes: ['write', 'read'], 'example.com/team': ['a'] } },
      'spec.extra: Forbidden: extra identity cannot be changed once set',
    ],
    [
      'extra emptied',
      { extra: {} },
      'spec.extra: Forbidden: extra identity cannot be changed once set',
    ],
  ];
  for (const [name, change, error] of changes)
    t.same(
      validateRequesterIdentityUpdate({ ...old, spec: { ...old.spec, ...change } }, old),
      [error],
      name,
    );
  const { extra: _extra, ...withoutExtra } = old.spec;
  t.same(
    validateRequesterIdentityUpdate({ ...old, spec: withoutExtra }, old),
    ['spec.extra: Forbidden: extra identity cannot be changed once set'],
    'extra removed',
  );
  t.same(
    validateRequesterIdentityUpdate(
      certificateRequestFrom(web1, withRequester({ username: 'x' })),
      certificateRequestFrom(web1, withRequester({ username: 'x', uid: '' })),
    ),
    [],
    'an absent uid is the empty one',
  );
});
