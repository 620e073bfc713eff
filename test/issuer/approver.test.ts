import t from 'tap';
import { CertificateRequestKind } from '../../src/api/certificate-request.js';
import { findCondition } from '../../src/api/conditions.js';
import { approvalSettled } from '../../src/issuer/certificaterequests/approval-policy.js';
import { certificateRequest, keyAndCsr } from '../support/issuer-fixtures.js';
import { startHarness } from '../support/issuer-stack-harness.js';

t.test('the approver approves with reason cert-manager.io', async (t) => {
  const h = await startHarness(t);
  const { csrPem } = await keyAndCsr({ algorithm: 'Ed25519' });
  await h.store.create(
    CertificateRequestKind,
    certificateRequest('ns', 'r', csrPem, { issuerRef: { name: 'x', group: 'example.com' } }),
  );
  const cr = await h.request(
    'ns',
    'r',
    (c) => findCondition(c.status?.conditions, 'Approved') !== undefined,
  );
  const approvedCondition = findCondition(cr.status?.conditions, 'Approved');
  t.equal(approvedCondition?.status, 'True');
  t.equal(approvedCondition?.reason, 'cert-manager.io');
  t.equal(approvedCondition?.message, 'Certificate request has been approved by cert-manager.io');
  await h.events.waitFor((e) => e.name === 'r');
  t.same(
    h.events.eventsFor('CertificateRequest', 'r', 'ns').map((e) => [e.type, e.reason]),
    [['Normal', 'cert-manager.io']],
  );
});

t.test('a policy that abstains leaves the request for another approver', async (t) => {
  const seen: string[] = [];
  const h = await startHarness(t, {
    approval: (request) => {
      seen.push(request.metadata.name);
      return request.metadata.name === 'allowed'
        ? { decision: 'approve', reason: 'policy', message: 'allowed by test policy' }
        : { decision: 'abstain' };
    },
  });
  const { csrPem } = await keyAndCsr({ algorithm: 'Ed25519' });
  const ref = { issuerRef: { name: 'x', group: 'example.com' } };
  await h.store.create(CertificateRequestKind, certificateRequest('ns', 'other', csrPem, ref));
  await h.store.create(CertificateRequestKind, certificateRequest('ns', 'allowed', csrPem, ref));
  await h.request(
    'ns',
    'allowed',
    (c) => findCondition(c.status?.conditions, 'Approved')?.reason === 'policy',
  );
  const other = await h.store.get(CertificateRequestKind, 'other', 'ns');
  t.same((other as { status?: unknown }).status, undefined, 'abstained request is untouched');
  t.ok(seen.includes('other'), 'the policy was asked');
});

t.test('settled requests are not re-decided', async (t) => {
  const base = certificateRequest('ns', 'r', '', { issuerRef: { name: 'x' } });
  const withConditions = (
    conditions: Array<{ type: string; status: 'True' | 'False'; reason?: string }>,
  ) => ({
    ...base,
    status: { conditions },
  });
  t.ok(approvalSettled(withConditions([{ type: 'Approved', status: 'True' }])));
  t.ok(approvalSettled(withConditions([{ type: 'Denied', status: 'True' }])));
  t.ok(approvalSettled(withConditions([{ type: 'Ready', status: 'False', reason: 'Failed' }])));
  t.ok(approvalSettled(withConditions([{ type: 'Ready', status: 'True', reason: 'Issued' }])));
  t.notOk(approvalSettled(withConditions([{ type: 'Ready', status: 'False', reason: 'Pending' }])));
  t.notOk(approvalSettled(base));
});
