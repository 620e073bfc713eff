import t from 'tap';
import {
  type ReissueDecision,
  type ReissueInput,
  reissueDecision,
  type VolumeRecord,
} from '../../src/volume-manager/policy/reissue-decision.js';
import type { ReadinessVerdict } from '../../src/volume-manager/readiness/pod-readiness.js';

// Every reason a volume is (re)issued, waits, only mounts, or is left alone, one row each: a
// branch of reissueDecision that went missing changes the answer of at least one row.

const NOW = Date.parse('2026-03-01T12:00:00Z');
const H = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

const ready: ReadinessVerdict = { ready: true };
const readyWith = (...podIPs: string[]): ReadinessVerdict => ({ ready: true, podIPs });
const notReady = (reason: string): ReadinessVerdict => ({ ready: false, reason });
const NO_JITTER = { maxMs: 0, draw: 0.7 };

/** A certificate issued an hour ago, due for renewal in an hour, valid for two. */
const issued: VolumeRecord = { nextIssuanceTime: iso(NOW + H), notAfter: iso(NOW + 2 * H) };
/** A first publish cut short with its request in flight. */
const pending: VolumeRecord = {
  pendingRequest: { name: 'req-1', namespace: 'shop', createdAt: iso(NOW - 60_000) },
};
/** A volume published empty, waiting for its pod. */
const waiting: VolumeRecord = { waiting: { reason: 'pod has no IP address yet', since: iso(NOW) } };
/** Two failed renewals: the next attempt waits for the backoff. */
const backingOff: VolumeRecord = { ...issued, failures: 2, nextRetryTime: iso(NOW + 60_000) };

function publish(
  record: VolumeRecord | undefined,
  readiness: ReadinessVerdict,
  extra: { podWatched?: boolean; canWait?: boolean } = {},
): ReissueInput {
  return {
    event: 'publish',
    record,
    podWatched: extra.podWatched ?? false,
    readiness,
    canWait: extra.canWait ?? true,
    now: NOW,
  };
}

function timing(
  event: 'restart' | 'settled',
  record: VolumeRecord,
  extra: { disableAutoRenew?: boolean; jitter?: { maxMs: number; draw: number } } = {},
): ReissueInput {
  return {
    event,
    record,
    disableAutoRenew: extra.disableAutoRenew ?? false,
    jitter: extra.jitter ?? NO_JITTER,
  };
}

const rows: Array<[string, ReissueInput, ReissueDecision]> = [
  // A NodePublishVolume.
  [
    'publish: a first publish issues',
    publish(undefined, ready),
    { action: 'issue', reason: 'publish', podIPs: undefined },
  ],
  [
    'publish: a first publish whose pod has its IPs issues with them',
    publish(undefined, readyWith('10.1.0.4')),
    { action: 'issue', reason: 'publish', podIPs: ['10.1.0.4'] },
  ],
  [
    'publish: pod not ready, and it may change: mounted empty, waiting for it',
    publish(undefined, notReady('pod has no IP address yet')),
    { action: 'wait-for-pod', reason: 'pod has no IP address yet' },
  ],
  [
    'publish: pod not ready, and it never changes (embedded mode): refused',
    publish(undefined, notReady('pod has no IP address yet'), { canWait: false }),
    { action: 'refuse', reason: 'pod has no IP address yet' },
  ],
  [
    'republish of a usable volume only mounts, whatever its pod says',
    publish(issued, notReady('pod has no IP address yet')),
    { action: 'mount-only' },
  ],
  [
    'republish of an expired volume issues',
    publish({ ...issued, notAfter: iso(NOW - 1) }, ready),
    { action: 'issue', reason: 'publish', podIPs: undefined },
  ],
  [
    'republish of a volume expiring this very moment issues',
    publish({ ...issued, notAfter: iso(NOW) }, ready),
    { action: 'issue', reason: 'publish', podIPs: undefined },
  ],
  [
    'republish of a volume with no expiry recorded issues',
    publish({ nextIssuanceTime: iso(NOW + H) }, ready),
    { action: 'issue', reason: 'publish', podIPs: undefined },
  ],
  [
    'republish of a volume never issued (its request in flight) issues',
    publish({ ...pending, notAfter: iso(NOW + H) }, ready),
    { action: 'issue', reason: 'publish', podIPs: undefined },
  ],
  [
    'republish of a waiting volume whose pod is watched mounts, still waiting',
    publish({ ...issued, ...waiting }, ready, { podWatched: true }),
    { action: 'keep-waiting', reason: 'pod has no IP address yet' },
  ],
  [
    'republish of a volume marked waiting that nobody watches looks at the pod again',
    publish(waiting, notReady('pod condition "Ready" not yet present')),
    { action: 'wait-for-pod', reason: 'pod condition "Ready" not yet present' },
  ],
  [
    'publish of a volume whose pod is watched but that does not wait issues',
    publish(pending, ready, { podWatched: true }),
    { action: 'issue', reason: 'publish', podIPs: undefined },
  ],

  // `cert-csi renew`.
  [
    'manual request: a volume this plugin does not manage is refused',
    { event: 'manual', managed: false, publishRunning: false, record: issued },
    { action: 'refuse', reason: 'not a volume managed by this plugin' },
  ],
  [
    'manual request: a first publish still in flight has nothing to renew',
    { event: 'manual', managed: true, publishRunning: true, record: pending },
    {
      action: 'refuse',
      reason: 'its first publish is still in progress: no certificate to renew yet',
    },
  ],
  [
    'manual request: a first publish that wrote nothing yet has nothing to renew',
    { event: 'manual', managed: true, publishRunning: true, record: undefined },
    {
      action: 'refuse',
      reason: 'its first publish is still in progress: no certificate to renew yet',
    },
  ],
  [
    'manual request: a volume with a certificate renews even while a republish runs',
    { event: 'manual', managed: true, publishRunning: true, record: issued },
    { action: 'issue', reason: 'manual request' },
  ],
  [
    'manual request: a volume waiting for its first certificate is asked for one (its pod decides)',
    { event: 'manual', managed: true, publishRunning: false, record: waiting },
    { action: 'issue', reason: 'manual request' },
  ],
  [
    'manual request: whatever the renewal time and the backoff say',
    { event: 'manual', managed: true, publishRunning: false, record: backingOff },
    { action: 'issue', reason: 'manual request' },
  ],

  // A renewal: the timer's, the manual request's, or a pod change's.
  [
    'timer due: the renewal time',
    { event: 'renewal', reason: 'renewal time', readiness: ready },
    { action: 'issue', reason: 'renewal time', podIPs: undefined },
  ],
  [
    'failure backoff: the retry after a failure',
    { event: 'renewal', reason: 'retry after failure', readiness: ready },
    { action: 'issue', reason: 'retry after failure', podIPs: undefined },
  ],
  [
    'never issued: a request in flight resumed',
    { event: 'renewal', reason: 'never issued', readiness: ready },
    { action: 'issue', reason: 'never issued', podIPs: undefined },
  ],
  [
    'a renewal with the pod IPs issues with them',
    { event: 'renewal', reason: 'pod ready', readiness: readyWith('10.1.0.4', 'fd00::4') },
    { action: 'issue', reason: 'pod ready', podIPs: ['10.1.0.4', 'fd00::4'] },
  ],
  [
    'a renewal whose pod is not ready waits, the certificate in place',
    {
      event: 'renewal',
      reason: 'manual request',
      readiness: notReady('pod does not yet have annotation "example.com/ok"'),
    },
    { action: 'wait-for-pod', reason: 'pod does not yet have annotation "example.com/ok"' },
  ],

  // The volume's pod changed (or its gate retry is due).
  [
    'pod ready: a waiting volume is issued',
    { event: 'pod-change', record: waiting, readiness: readyWith('10.1.0.4') },
    { action: 'issue', reason: 'pod ready' },
  ],
  [
    'a waiting volume whose pod is still not ready waits, for the new reason',
    { event: 'pod-change', record: waiting, readiness: notReady('pod has no IPv6 address yet') },
    { action: 'wait-for-pod', reason: 'pod has no IPv6 address yet' },
  ],
  [
    'pod IPs changed: re-issued for the new ones',
    {
      event: 'pod-change',
      record: { ...issued, podIPs: ['10.1.0.4'] },
      readiness: readyWith('10.1.0.5'),
    },
    { action: 'issue', reason: 'pod IPs changed' },
  ],
  [
    'pod IPs changed: one more',
    {
      event: 'pod-change',
      record: { ...issued, podIPs: ['10.1.0.4'] },
      readiness: readyWith('10.1.0.4', 'fd00::4'),
    },
    { action: 'issue', reason: 'pod IPs changed' },
  ],
  [
    'pod IPs changed: one fewer',
    {
      event: 'pod-change',
      record: { ...issued, podIPs: ['10.1.0.4', 'fd00::4'] },
      readiness: readyWith('10.1.0.4'),
    },
    { action: 'issue', reason: 'pod IPs changed' },
  ],
  [
    'pod IPs changed: a certificate recorded without its IPs gets them recorded',
    { event: 'pod-change', record: issued, readiness: readyWith('10.1.0.4') },
    { action: 'issue', reason: 'pod IPs changed' },
  ],
  [
    'the same pod IPs: nothing',
    {
      event: 'pod-change',
      record: { ...issued, podIPs: ['10.1.0.4', 'fd00::4'] },
      readiness: readyWith('10.1.0.4', 'fd00::4'),
    },
    { action: 'nothing', why: 'nothing its certificate names changed' },
  ],
  [
    'a pod losing its IPs (torn down): the certificate stays',
    {
      event: 'pod-change',
      record: { ...issued, podIPs: ['10.1.0.4'] },
      readiness: notReady('pod has no IP address yet'),
    },
    { action: 'nothing', why: 'nothing its certificate names changed' },
  ],
  [
    'a pod change of a volume without pod IPs (gates only): nothing',
    { event: 'pod-change', record: issued, readiness: ready },
    { action: 'nothing', why: 'nothing its certificate names changed' },
  ],

  // The trust bundle the volume follows changed.
  [
    'trust bundle change: only the trust files, no new key, no request',
    { event: 'trust-bundle-change', hasCertificate: true },
    { action: 'rewrite-trust-files' },
  ],
  [
    'trust bundle change before the first certificate: its issuance writes the bundle',
    { event: 'trust-bundle-change', hasCertificate: false },
    { action: 'nothing', why: 'its issuance writes the bundle' },
  ],

  // Restart: what rediscovery takes back, and when each volume is due.
  [
    'restart: a volume that never got anything is left to kubelet',
    timing('restart', {}),
    { action: 'leave-to-kubelet' },
  ],
  [
    'restart: a request in flight is resumed at once',
    timing('restart', pending),
    { action: 'schedule', at: 0, reason: 'never issued' },
  ],
  [
    'restart: a volume waiting for its pod is taken back, issued at once when it can',
    timing('restart', waiting),
    { action: 'schedule', at: 0, reason: 'never issued' },
  ],
  [
    'restart: an overdue certificate is due at once',
    timing('restart', { ...issued, nextIssuanceTime: iso(NOW - H) }),
    { action: 'schedule', at: NOW - H, reason: 'renewal time' },
  ],
  [
    'restart: a valid certificate waits for its renewal time',
    timing('restart', issued),
    { action: 'schedule', at: NOW + H, reason: 'renewal time' },
  ],
  [
    'restart: a failed volume continues its backoff',
    timing('restart', backingOff),
    { action: 'schedule', at: NOW + 60_000, reason: 'retry after failure' },
  ],
  [
    'restart: disable-auto-renew holding a certificate gets no timer',
    timing('restart', issued, { disableAutoRenew: true }),
    { action: 'nothing', why: 'disable-auto-renew' },
  ],

  // After an attempt (or a republish that found no timer): when the next one is due.
  [
    'timer: the renewal time, spread by the jitter',
    timing('settled', issued, { jitter: { maxMs: 60_000, draw: 0.5 } }),
    { action: 'schedule', at: NOW + H + 30_000, reason: 'renewal time' },
  ],
  [
    'timer: the jitter stays under its maximum',
    timing('settled', issued, { jitter: { maxMs: 1_000, draw: 0.9999 } }),
    { action: 'schedule', at: NOW + H + 999, reason: 'renewal time' },
  ],
  [
    'timer: failure backoff, not the renewal time',
    timing('settled', backingOff),
    { action: 'schedule', at: NOW + 60_000, reason: 'retry after failure' },
  ],
  [
    'timer: a retry time without failures counted is stale',
    timing('settled', { ...issued, failures: 0, nextRetryTime: iso(NOW + 60_000) }),
    { action: 'schedule', at: NOW + H, reason: 'renewal time' },
  ],
  [
    'timer: failures without a retry time wait for the renewal time',
    timing('settled', { ...issued, failures: 1 }),
    { action: 'schedule', at: NOW + H, reason: 'renewal time' },
  ],
  [
    'timer: never issued, at once',
    timing('settled', pending),
    { action: 'schedule', at: 0, reason: 'never issued' },
  ],
  [
    'timer: after an attempt that left nothing in flight, a volume without a certificate at once',
    timing('settled', {}),
    { action: 'schedule', at: 0, reason: 'never issued' },
  ],
  [
    'disable-auto-renew: a volume holding a certificate is never renewed on its own',
    timing('settled', issued, { disableAutoRenew: true }),
    { action: 'nothing', why: 'disable-auto-renew' },
  ],
  [
    'disable-auto-renew: a volume without a certificate still gets one',
    timing('settled', pending, { disableAutoRenew: true }),
    { action: 'schedule', at: 0, reason: 'never issued' },
  ],
  [
    'disable-auto-renew: a failed first issuance is retried after the backoff',
    timing(
      'settled',
      { ...pending, failures: 1, nextRetryTime: iso(NOW + 30_000) },
      {
        disableAutoRenew: true,
      },
    ),
    { action: 'schedule', at: NOW + 30_000, reason: 'retry after failure' },
  ],
];

t.test('why a volume is (re)issued now, one row per reason', async (t) => {
  for (const [name, input, expected] of rows) {
    t.strictSame(reissueDecision(input), expected, name);
  }
});

t.test('every reason a volume is issued for is named by a row', async (t) => {
  const reasons = new Set(
    rows.flatMap(([, input]) => {
      const decision = reissueDecision(input);
      return decision.action === 'issue' ? [decision.reason] : [];
    }),
  );
  t.strictSame([...reasons].sort(), [
    'manual request',
    'never issued',
    'pod IPs changed',
    'pod ready',
    'publish',
    'renewal time',
    'retry after failure',
  ]);
  const actions = new Set(rows.map(([, input]) => reissueDecision(input).action));
  t.strictSame(
    [...actions].sort(),
    [
      'issue',
      'keep-waiting',
      'leave-to-kubelet',
      'mount-only',
      'nothing',
      'refuse',
      'rewrite-trust-files',
      'schedule',
      'wait-for-pod',
    ],
    'and every action',
  );
});
