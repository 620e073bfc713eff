import t from 'tap';
import { ManualClock } from '../../src/base/clock.js';
import type { VolumeMetadata } from '../../src/volume/metadata.js';
import { RenewalScheduler } from '../../src/volume-manager/state/renewal-scheduler.js';

const HOUR_MS = 3600_000;

function metadata(fields: Partial<VolumeMetadata> = {}): VolumeMetadata {
  return { volumeId: 'csi-a', targetPath: '/pods/a/mount', volumeContext: {}, ...fields };
}

function scheduler(jitterMs = 0) {
  const clock = new ManualClock();
  const fired: Array<[string, string, number]> = [];
  const timers = new RenewalScheduler(clock, jitterMs, (volumeId, reason) => {
    fired.push([volumeId, reason, clock.now()]);
  });
  return { clock, fired, timers };
}

t.test('one timer per volume at its renewal time', async (t) => {
  const { clock, fired, timers } = scheduler();
  const at = clock.now() + HOUR_MS;
  timers.schedule('csi-a', metadata({ nextIssuanceTime: new Date(at).toISOString() }), {
    disableAutoRenew: false,
  });
  t.ok(timers.has('csi-a'));
  t.equal(timers.size, 1);
  // Scheduling again replaces the timer instead of adding one.
  timers.schedule('csi-a', metadata({ nextIssuanceTime: new Date(at).toISOString() }), {
    disableAutoRenew: false,
  });
  t.equal(timers.size, 1);
  clock.advance(HOUR_MS - 1);
  t.same(fired, [], 'nothing before the renewal time');
  clock.advance(1);
  t.same(fired, [['csi-a', 'renewal time', at]]);
  t.notOk(timers.has('csi-a'), 'a fired timer is no longer armed');
});

t.test('a failed volume waits for its retry time, a never issued one goes at once', async (t) => {
  const { clock, fired, timers } = scheduler();
  const retryAt = clock.now() + 30_000;
  timers.schedule(
    'csi-failed',
    metadata({
      nextIssuanceTime: new Date(clock.now() + HOUR_MS).toISOString(),
      failures: 2,
      nextRetryTime: new Date(retryAt).toISOString(),
    }),
    { disableAutoRenew: true },
  );
  timers.schedule('csi-new', metadata(), { disableAutoRenew: true });
  clock.advance(0);
  t.same(fired, [['csi-new', 'never issued', clock.now()]]);
  clock.advance(30_000);
  t.same(fired[1], ['csi-failed', 'retry after failure', retryAt]);
});

t.test('disable-auto-renew clears the timer of a volume that holds a certificate', async (t) => {
  const { clock, fired, timers } = scheduler();
  const issued = metadata({ nextIssuanceTime: new Date(clock.now() + HOUR_MS).toISOString() });
  timers.schedule('csi-a', issued, { disableAutoRenew: false });
  timers.schedule('csi-a', issued, { disableAutoRenew: true });
  t.notOk(timers.has('csi-a'));
  clock.advance(2 * HOUR_MS);
  t.same(fired, []);
});

t.test('jitter spreads a renewal over at most jitterMs after the renewal time', async (t) => {
  const { clock, fired, timers } = scheduler(60_000);
  const at = clock.now() + HOUR_MS;
  timers.schedule('csi-a', metadata({ nextIssuanceTime: new Date(at).toISOString() }), {
    disableAutoRenew: false,
  });
  clock.advance(HOUR_MS - 1);
  t.same(fired, []);
  clock.advance(60_001);
  t.equal(fired.length, 1);
  const firedAt = fired[0]?.[2] ?? 0;
  t.ok(firedAt >= at && firedAt < at + 60_000, 'within the jitter window');
});

t.test('cancel and clear disarm timers', async (t) => {
  const { clock, fired, timers } = scheduler();
  const soon = metadata({ nextIssuanceTime: new Date(clock.now() + 1000).toISOString() });
  for (const id of ['csi-a', 'csi-b', 'csi-c']) {
    timers.schedule(id, soon, { disableAutoRenew: false });
  }
  timers.cancel('csi-a');
  t.equal(timers.size, 2);
  timers.clear();
  t.equal(timers.size, 0);
  clock.advance(2000);
  t.same(fired, []);
});
