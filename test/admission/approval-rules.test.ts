import t from 'tap';
import {
  APPROVE_ACCESS,
  approvalForbidden,
  approvalSignerNames,
  approveAttributes,
  newApprovalConditions,
  unknownSignerResource,
} from '../../src/admission/approval-rules.js';
import type { CertificateRequest } from '../../src/api/certificate-request.js';
import type { Condition } from '../../src/api/conditions.js';
import type { IssuerReference } from '../../src/api/issuer-ref.js';

const request = (issuerRef: IssuerReference, types: string[] = []): CertificateRequest => ({
  apiVersion: 'cert-manager.io/v1',
  kind: 'CertificateRequest',
  metadata: { name: 'web-1', namespace: 'apps' },
  spec: { request: 'LS0t', issuerRef },
  status: {
    conditions: types.map(
      (type): Condition => ({ type, status: type === 'Ready' ? 'False' : 'True' }),
    ),
  },
});

t.test('the plugin runs only when an update adds Approved or Denied', async (t) => {
  const ref = { name: 'ca' };
  const cases: Array<[string, string[], string[], string[]]> = [
    ['approving', [], ['Approved'], ['Approved']],
    ['denying', ['Ready'], ['Ready', 'Denied'], ['Denied']],
    ['both at once', [], ['Denied', 'Approved'], ['Approved', 'Denied']],
    ['denying an approved request', ['Approved'], ['Approved', 'Denied'], ['Denied']],
    ['already approved', ['Approved'], ['Approved', 'Ready'], []],
    ['removing Approved adds nothing', ['Approved'], [], []],
    ['other conditions', [], ['Ready', 'InvalidRequest'], []],
  ];
  for (const [name, before, after, added] of cases)
    t.same(newApprovalConditions(request(ref, after), request(ref, before)), added, name);
  const { status: _status, ...noStatus } = request(ref);
  t.same(
    newApprovalConditions(request(ref, ['Approved']), noStatus as CertificateRequest),
    ['Approved'],
    'no status before',
  );
});

t.test('signer names: the wildcard first, then the issuer by namespace or by name', async (t) => {
  t.same(approvalSignerNames('issuers.cert-manager.io', request({ name: 'ca' }), false), [
    'issuers.cert-manager.io/*',
    'issuers.cert-manager.io/apps.ca',
  ]);
  t.same(
    approvalSignerNames(
      'clusterissuers.cert-manager.io',
      request({ name: 'root', kind: 'ClusterIssuer' }),
      true,
    ),
    ['clusterissuers.cert-manager.io/*', 'clusterissuers.cert-manager.io/root'],
  );
  t.same(
    approvalSignerNames(
      'awspcaissuers.awspca.cert-manager.io',
      request({ name: 'pca', kind: 'AWSPCAIssuer', group: 'awspca.cert-manager.io' }),
      false,
    ),
    ['awspcaissuers.awspca.cert-manager.io/*', 'awspcaissuers.awspca.cert-manager.io/apps.pca'],
    'an external issuer type',
  );
});

t.test(
  'the SubjectAccessReview asks approve on cert-manager.io signers, any version',
  async (t) => {
    t.same(APPROVE_ACCESS, {
      verb: 'approve',
      group: 'cert-manager.io',
      resource: 'signers',
      version: '*',
    });
    t.same(approveAttributes('issuers.cert-manager.io/apps.ca'), {
      verb: 'approve',
      group: 'cert-manager.io',
      resource: 'signers',
      version: '*',
      name: 'issuers.cert-manager.io/apps.ca',
    });
  },
);

t.test('refusals name the user and the issuerRef as Go prints the struct', async (t) => {
  t.equal(
    approvalForbidden('alice', request({ name: 'ca', kind: 'Issuer', group: 'cert-manager.io' })),
    'status.conditions: Forbidden: user "alice" does not have permissions to set approved/denied conditions for issuer {ca Issuer cert-manager.io}',
  );
  t.equal(
    approvalForbidden('system:serviceaccount:x:"q"', request({ name: 'ca' })),
    'status.conditions: Forbidden: user "system:serviceaccount:x:\\"q\\"" does not have permissions to set approved/denied conditions for issuer {ca  }',
    'the name quoted as %q does; empty kind and group printed empty, as written',
  );
  const bare = { metadata: { name: 'x' } } as unknown as CertificateRequest;
  t.equal(
    approvalForbidden('alice', bare),
    'status.conditions: Forbidden: user "alice" does not have permissions to set approved/denied conditions for issuer {  }',
    'a request without spec prints the zero struct, as Go would',
  );
  t.same(
    approvalSignerNames('issuers.cert-manager.io', bare, false),
    ['issuers.cert-manager.io/*', 'issuers.cert-manager.io/.'],
    'and asks for the names of empty fields, which nobody is granted by accident',
  );
  t.equal(
    unknownSignerResource(request({ name: 'x', kind: 'Signer', group: 'example.com' })),
    'spec.issuerRef: Forbidden: referenced signer resource does not exist: {x Signer example.com}',
  );
});
