import t from 'tap';
import {
  type BackoffPolicy,
  MIN_RENEWAL_LEAD_MS,
  retryAfterIssuance,
} from '../../src/volume-manager/policy/renewal-policy.js';

const policy: BackoffPolicy = { initialMs: 30_000, factor: 2, capMs: 300_000, jitter: 0 };
const asked = Date.parse('2026-11-24T12:00:00.500Z');

function issued(renewalOffsetMs: number, lifetimeMs = 6_000) {
  return {
    nextIssuanceTime: new Date(asked + renewalOffsetMs),
    notAfter: new Date(asked + lifetimeMs),
  };
}

t.test(
  'an issuance is a failure only when the issuer handed back a certificate due at once',
  async (t) => {
    const cases: Array<[string, ReturnType<typeof issued>, number, boolean]> = [
      ['renewal time ahead of now', issued(4_000), asked + 100, false],
      // A 6 s certificate (notBefore truncated to the second before the request) signed after 5 s
      // on a loaded node: due now only because getting it took long; renewing gets a fresh one.
      ['a short certificate signed slowly', issued(3_500), asked + 5_000, false],
      ['renewal exactly at the least lead', issued(MIN_RENEWAL_LEAD_MS), asked + 3_000, false],
      ['renewal just under the least lead', issued(MIN_RENEWAL_LEAD_MS - 1), asked + 3_000, true],
      ['a certificate already expired when signed', issued(-60_000, -1_000), asked + 50, true],
      ['a duration shortened below renew-before', issued(0, 1_000), asked + 50, true],
    ];
    for (const [name, certificate, now, failure] of cases) {
      const retry = retryAfterIssuance(certificate, asked, 0, now, policy);
      t.equal(retry !== undefined, failure, name);
    }
  },
);

t.test('a certificate due at once backs off after the failures before it', async (t) => {
  const now = asked + 100;
  const first = retryAfterIssuance(issued(0, 1_000), asked, 0, now, policy);
  t.same(first && { failures: first.failures, at: first.at }, { failures: 1, at: now + 30_000 });
  t.match(first?.message, /due for renewal at once .*retrying after backoff/);
  const third = retryAfterIssuance(issued(0, 1_000), asked, 2, now, policy);
  t.same(third && { failures: third.failures, at: third.at }, { failures: 3, at: now + 120_000 });
});

t.test(
  'without a record of when it was asked, a due certificate counts as a failure',
  async (t) => {
    t.ok(retryAfterIssuance(issued(3_500), Number.NaN, 0, asked + 5_000, policy));
  },
);
