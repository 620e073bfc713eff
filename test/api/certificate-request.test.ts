import t from 'tap';
import {
  type CertificateRequest,
  decodeBytes,
  encodeBytes,
  finalState,
  isApproved,
  isDenied,
  readyReason,
} from '../../src/api/certificate-request.js';
import type { Condition } from '../../src/api/conditions.js';
import {
  certificateRequest,
  certificateRequestFrom,
  withConditions,
  withIssuerRef,
  withNamespace,
} from '../support/builders/index.js';

const r = certificateRequest('r', withNamespace('ns'), withIssuerRef({ name: 'ca' }));

t.test('final states follow the reference table', async (t) => {
  const cases: Array<[string, Condition[], string | undefined]> = [
    ['no conditions', [], undefined],
    ['approved only', [{ type: 'Approved', status: 'True' }], undefined],
    ['pending', [{ type: 'Ready', status: 'False', reason: 'Pending' }], undefined],
    ['issued', [{ type: 'Ready', status: 'True', reason: 'Issued' }], 'Issued'],
    ['failed', [{ type: 'Ready', status: 'False', reason: 'Failed' }], 'Failed'],
    ['denied', [{ type: 'Denied', status: 'True', reason: 'policy' }], 'Denied'],
    [
      'denied wins over a stale Ready',
      [
        { type: 'Ready', status: 'False', reason: 'Pending' },
        { type: 'Denied', status: 'True' },
      ],
      'Denied',
    ],
    ['invalid request', [{ type: 'InvalidRequest', status: 'True' }], 'InvalidRequest'],
    [
      'ready true with another reason',
      [{ type: 'Ready', status: 'True', reason: 'Other' }],
      undefined,
    ],
  ];
  for (const [name, conditions, expected] of cases) {
    t.equal(finalState(certificateRequestFrom(r, withConditions(conditions))), expected, name);
  }
});

t.test('approval helpers read the conditions', async (t) => {
  const approved = certificateRequestFrom(
    r,
    withConditions([{ type: 'Approved', status: 'True' }]),
  );
  t.ok(isApproved(approved));
  t.notOk(isDenied(approved));
  t.equal(readyReason(approved), undefined);
  const noStatus: CertificateRequest = { ...approved, status: undefined as never };
  delete noStatus.status;
  t.notOk(isApproved(noStatus));
  t.equal(finalState(noStatus), undefined);
});

t.test('[]byte fields are base64 in the API form', async (t) => {
  const pem = '-----BEGIN CERTIFICATE REQUEST-----\nabc\n-----END CERTIFICATE REQUEST-----\n';
  t.equal(decodeBytes(encodeBytes(pem)), pem);
  t.equal(encodeBytes('hi'), 'aGk=');
  t.equal(decodeBytes(undefined), undefined);
});
