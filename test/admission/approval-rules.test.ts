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
import {
  certificateRequest,
  certificateRequestFrom,
  withConditions,
  withCsr,
  withIssuerRef,
  withNamespace,
} from '../support/builders/index.js';

/** The request of the cases, with an empty status (give it withIssuerRef). */
const web1 = certificateRequest('web-1', withNamespace('apps'), withCsr('---'), withConditions([]));

/** Sets conditions of the given types: Ready False, the others True. */
const withTypes = (types: string[]) =>
  withConditions(
    types.map((type): Condition => ({ type, status: type === 'Ready' ? 'False' : 'True' })),
  );

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
    t.same(
      newApprovalConditions(
        certificateRequestFrom(web1, withIssuerRef(ref), withTypes(after)),
        certificateRequestFrom(web1, withIssuerRef(ref), withTypes(before)),
      ),
      added,
      name,
    );
  const { status: _status, ...noStatus } = certificateRequestFrom(web1, withIssuerRef(ref));
  t.same(
    newApprovalConditions(
      certificateRequestFrom(web1, withIssuerRef(ref), withTypes(['Approved'])),
      noStatus as CertificateRequest,
    ),
    ['Approved'],
    'no status before',
  );
});

t.test('signer names: the wildcard first, then the issuer by namespace or by name', async (t) => {
  t.same(
    approvalSignerNames(
      'issuers.cert-manager.io',
      certificateRequestFrom(web1, withIssuerRef({ name: 'ca' })),
      false,
    ),
    ['issuers.cert-manager.io/*', 'issuers.cert-manager.io/apps.ca'],
  );
  t.same(
    approvalSignerNames(
      'clusterissuers.cert-manager.io',
      certificateRequestFrom(web1, withIssuerRef({ name: 'root', kind: 'ClusterIssuer' })),
      true,
    ),
    ['clusterissuers.cert-manager.io/*', 'clusterissuers.cert-manager.io/root'],
  );
  t.same(
    approvalSignerNames(
      'awspcaissuers.awspca.cert-manager.io',
      certificateRequestFrom(
        web1,
        withIssuerRef({ name: 'pca', kind: 'AWSPCAIssuer', group: 'awspca.cert-manager.io' }),
      ),
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
    approvalForbidden(
      'alice',
      certificateRequestFrom(
        web1,
        withIssuerRef({ name: 'ca', kind: 'Issuer', group: 'cert-manager.io' }),
      ),
    ),
    'status.conditions: Forbidden: user "alice" does not have permissions to set approved/denied conditions for issuer {ca Issuer cert-manager.io}',
  );
  t.equal(
    approvalForbidden(
      'system:serviceaccount:x:"q"',
      certificateRequestFrom(web1, withIssuerRef({ name: 'ca' })),
    ),
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
    unknownSignerResource(
      certificateRequestFrom(
        web1,
        withIssuerRef({ name: 'x', kind: 'Signer', group: 'example.com' }),
      ),
    ),
    'spec.issuerRef: Forbidden: referenced signer resource does not exist: {x Signer example.com}',
  );
});
