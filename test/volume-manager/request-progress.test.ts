import t from 'tap';
import type { CertificateRequest } from '../../src/api/certificate-request.js';
import type { Condition } from '../../src/api/conditions.js';
import { requestProgress } from '../../src/volume-manager/issuance/request-progress.js';

function request(conditions: Condition[]): CertificateRequest {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'CertificateRequest',
    metadata: { name: 'r1', namespace: 'ns' },
    spec: { request: '', issuerRef: { name: 'ca' } },
    status: { conditions },
  };
}

const approved: Condition = { type: 'Approved', status: 'True', reason: 'cert-manager.io' };

t.test('what a waiting volume reports, in csi-lib words', async (t) => {
  t.same(requestProgress(request([])), {
    state: 'waiting',
    message: 'request "r1" has not yet been approved by approval plugin',
  });
  t.same(requestProgress(request([approved])), {
    state: 'waiting',
    message: 'request "r1" has no ready condition',
  });
  t.same(
    requestProgress(
      request([
        approved,
        { type: 'Ready', status: 'False', reason: 'Pending', message: 'issuer not ready' },
      ]),
    ),
    { state: 'waiting', message: 'request "r1" is pending: issuer not ready' },
  );
  t.same(
    requestProgress(
      request([approved, { type: 'Ready', status: 'False', reason: 'Odd', message: 'hm' }]),
    ),
    { state: 'waiting', message: 'request "r1" has unrecognised Ready condition state (Odd): hm' },
  );
  t.same(
    requestProgress(request([approved, { type: 'Ready', status: 'True', reason: 'Issued' }])),
    {
      state: 'issued',
    },
  );
  t.same(
    requestProgress(
      request([approved, { type: 'Ready', status: 'False', reason: 'Failed', message: 'bad csr' }]),
    ),
    { state: 'failed', message: 'request "r1" has failed: bad csr' },
  );
  t.same(requestProgress(request([{ type: 'Denied', status: 'True', message: 'no' }])), {
    state: 'denied',
    message: 'request "r1" has been denied by the approval plugin: no',
  });
  t.same(requestProgress(request([{ type: 'InvalidRequest', status: 'True' }])), {
    state: 'failed',
    message: 'request "r1" has failed: ',
  });
});
