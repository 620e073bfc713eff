import t from 'tap';
import {
  type BackoffClass,
  type BackoffCounts,
  type BackoffPolicy,
  backoffDelay,
  countFailedAttempt,
  MIN_RENEWAL_LEAD_MS,
  retryAfterIssuance,
} from '../../src/volume-manager/policy/renewal-policy.js';
import { DEFAULT_GATE_BACKOFF } from '../../src/volume-manager/settings.js';

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

t.test('gate waits and issuance failures back off separately (csi-lib 0.11)', async (t) => {
  // A volume's run of failed attempts, each with the delay csi-lib's defaults give before the
  // next one, with no jitter: the class hit counts on, the other starts afresh.
  const gate = { ...DEFAULT_GATE_BACKOFF, jitter: 0 };
  const delays: Record<BackoffClass, BackoffPolicy> = { gate, issuance: policy };
  const run: Array<[BackoffClass, BackoffCounts, number]> = [
    ['gate', { gate: 1, issuance: 0 }, 1_000],
    ['gate', { gate: 2, issuance: 0 }, 2_000],
    ['gate', { gate: 3, issuance: 0 }, 4_000],
    ['issuance', { gate: 0, issuance: 1 }, 30_000],
    ['issuance', { gate: 0, issuance: 2 }, 60_000],
    ['issuance', { gate: 0, issuance: 3 }, 120_000],
    ['gate', { gate: 1, issuance: 0 }, 1_000],
    ['issuance', { gate: 0, issuance: 1 }, 30_000],
    ['gate', { gate: 1, issuance: 0 }, 1_000],
    ['gate', { gate: 2, issuance: 0 }, 2_000],
    ['gate', { gate: 3, issuance: 0 }, 4_000],
    ['gate', { gate: 4, issuance: 0 }, 8_000],
    ['gate', { gate: 5, issuance: 0 }, 10_000],
    ['gate', { gate: 6, issuance: 0 }, 10_000],
  ];
  let counts: BackoffCounts = { gate: 0, issuance: 0 };
  for (const [i, [failed, expected, delay]] of run.entries()) {
    counts = countFailedAttempt(counts, failed);
    t.same(counts, expected, `attempt ${i + 1}, ${failed}: counts`);
    t.equal(backoffDelay(counts[failed], delays[failed]), delay, `attempt ${i + 1}: delay`);
  }
  t.same(DEFAULT_GATE_BACKOFF, { initialMs: 1_000, factor: 2, capMs: 10_000, jitter: 0.5 });
  t.equal(
    backoffDelay(5, DEFAULT_GATE_BACKOFF, () => 0.999),
    14_995,
    'jitter adds up to half',
  );
});
