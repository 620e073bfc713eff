import t from 'tap';
import { errorCellText } from '../../src/cli/status/error-cell.js';
import { formatTable } from '../../src/cli/status/volumes-table.js';

const UUID = '3f2a9c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b';
const NOT_FOUND = 'Referenced "Issuer" not found: issuer.cert-manager.io "embedded-ca" not found';

t.test("the status table's LAST ERROR puts the reason first, the request last", async (t) => {
  const cases: Array<[string, string, string]> = [
    [
      'a publish that timed out on a pending request',
      `waiting for request: request "${UUID}" is pending: ${NOT_FOUND}`,
      `timed out, pending: ${NOT_FOUND} (request ${UUID})`,
    ],
    [
      'a pending request',
      `request "${UUID}" is pending: ${NOT_FOUND}`,
      `pending: ${NOT_FOUND} (request ${UUID})`,
    ],
    ['a failed request', `request "r" has failed: bad CSR`, 'failed: bad CSR (request r)'],
    [
      'a denied request',
      `request "r" has been denied by the approval plugin: no`,
      'denied: no (request r)',
    ],
    [
      'not approved',
      `waiting for request: request "r" has not yet been approved by approval plugin`,
      'timed out, not approved yet (request r)',
    ],
    [
      'no Ready condition',
      `request "r" has no ready condition`,
      'no Ready condition yet (request r)',
    ],
    [
      'not seen yet',
      `waiting for request: request "r" has not been seen by this node yet`,
      'timed out, not seen by this node yet (request r)',
    ],
    [
      'an unrecognised state is kept as said',
      `request "r" has unrecognised Ready condition state (Odd): x`,
      'has unrecognised Ready condition state (Odd): x (request r)',
    ],
    [
      'any other error, as it is',
      'trust bundle not available: gone',
      'trust bundle not available: gone',
    ],
  ];
  for (const [what, message, cell] of cases) t.equal(errorCellText(message), cell, what);
});

t.test('the reason survives the cut at the column width', async (t) => {
  const table = formatTable([
    {
      volumeId: 'v-rsa',
      state: 'failing',
      renewalPending: false,
      lastError: {
        message: `waiting for request: request "${UUID}" is pending: ${NOT_FOUND}`,
        time: '2026-11-28T00:00:00Z',
      },
    } as Parameters<typeof formatTable>[0][number],
  ]);
  t.match(table, /timed out, pending: Referenced "Issuer" not found/);
});
