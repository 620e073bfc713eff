import t from 'tap';
import type { Condition } from '../../src/api/conditions.js';
import { requestProgress } from '../../src/volume-manager/issuance/request-progress.js';
import {
  certificateRequest,
  certificateRequestFrom,
  withConditions,
  withIssuerRef,
  withNamespace,
} from '../support/builders/index.js';

/** The request the cases report on, in each case with other conditions. */
const r1 = certificateRequest('r1', withNamespace('ns'), withIssuerRef({ name: 'ca' }));

const approved: Condition = { type: 'Approved', status: 'True', reason: 'cert-manager.io' };

t.test('what a waiting volume reports, in csi-lib words', async (t) => {
  t.same(requestProgress(certificateRequestFrom(r1, withConditions([]))), {
    state: 'waiting',
    message: 'request "r1" has not yet been approved by approval plugin',
  });
  t.same(requestProgress(certificateRequestFrom(r1, withConditions([approved]))), {
    state: 'waiting',
    message: 'request "r1" has no ready condition',
  });
  t.same(
    requestProgress(
      certificateRequestFrom(
        r1,
        withConditions([
          approved,
          { type: 'Ready', status: 'False', reason: 'Pending', message: 'issuer not ready' },
        ]),
      ),
    ),
    { state: 'waiting', message: 'request "r1" is pending: issuer not ready' },
  );
  t.same(
    requestProgress(
      certificateRequestFrom(
        r1,
        withConditions([
          approved,
          { type: 'Ready', status: 'False', reason: 'Odd', message: 'hm' },
        ]),
      ),
    ),
    { state: 'waiting', message: 'request "r1" has unrecognised Ready condition state (Odd): hm' },
  );
  t.same(
    requestProgress(
      certificateRequestFrom(
        r1,
        withConditions([approved, { type: 'Ready', status: 'True', reason: 'Issued' }]),
      ),
    ),
    {
      state: 'issued',
    },
  );
  t.same(
    requestProgress(
      certificateRequestFrom(
        r1,
        withConditions([
          approved,
          { type: 'Ready', status: 'False', reason: 'Failed', message: 'bad csr' },
        ]),
      ),
    ),
    { state: 'failed', message: 'request "r1" has failed: bad csr' },
  );
  t.same(
    requestProgress(
      certificateRequestFrom(
        r1,
        withConditions([{ type: 'Denied', status: 'True', message: 'no' }]),
      ),
    ),
    {
      state: 'denied',
      message: 'request "r1" has been denied by the approval plugin: no',
    },
  );
  t.same(
    requestProgress(
      certificateRequestFrom(r1, withConditions([{ type: 'InvalidRequest', status: 'True' }])),
    ),
    {
      state: 'failed',
      message: 'request "r1" has failed: ',
    },
  );
});
