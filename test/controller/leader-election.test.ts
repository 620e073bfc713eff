import { setTimeout as delay } from 'node:timers/promises';
import t from 'tap';
import { type Lease, LeaseKind } from '../../src/api/lease.js';
import { checkLeaderElectionTiming, LeaderElector } from '../../src/controller/leader-election.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import type { ResourceStore } from '../../src/store/resource-store.js';
import { until } from '../support/eventually.js';

const timing = { leaseDurationMs: 600, renewDeadlineMs: 400, retryPeriodMs: 100 };

function candidate(store: ResourceStore, identity: string) {
  const elector = new LeaderElector({ store, namespace: 'ns', name: 'lock', identity, ...timing });
  const log: string[] = [];
  const done = elector.run(async (signal) => {
    log.push('start');
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
    log.push('stop');
  });
  return { elector, log, done };
}

t.test('one of two candidates leads; the other takes over after the holder gives up', async (t) => {
  const store = new MemoryStore();
  const a = candidate(store, 'a');
  await until(() => a.elector.isLeader());
  const b = candidate(store, 'b');
  await delay(timing.leaseDurationMs * 2);
  t.ok(a.elector.isLeader(), 'a still leads: it renews');
  t.notOk(b.elector.isLeader(), 'b waits while the lease is renewed');
  t.same(b.log, [], 'b never started its work');
  const lease = await store.get<Lease>(LeaseKind, 'lock', 'ns');
  t.equal(lease.spec.holderIdentity, 'a');
  t.equal(lease.spec.leaseDurationSeconds, 1, 'duration rounded up to whole seconds');

  await a.elector.stop();
  await a.done;
  t.same(a.log, ['start', 'stop'], 'a stopped its work');
  const released = await store.get<Lease>(LeaseKind, 'lock', 'ns');
  t.equal(released.spec.holderIdentity, '', 'a released the lease');
  await until(() => b.elector.isLeader(), { timeoutMs: timing.retryPeriodMs * 5 });
  t.same(b.log, ['start'], 'b works once it leads');
  const taken = await store.get<Lease>(LeaseKind, 'lock', 'ns');
  t.equal(taken.spec.holderIdentity, 'b');
  await b.elector.stop();
  await b.done;
});

t.test('a holder that stops renewing loses the lease after the lease duration', async (t) => {
  const store = new MemoryStore();
  // A frozen holder: the lease names it, but nothing renews it (as after kill -9).
  const renewTime = new Date().toISOString();
  await store.create<Lease>(LeaseKind, {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'lock', namespace: 'ns' },
    spec: {
      holderIdentity: 'dead',
      leaseDurationSeconds: 1,
      renewTime,
      leaseTransitions: 3,
    },
  });
  const b = candidate(store, 'b');
  await until(() => b.elector.isLeader());
  // From the holder's last renewal, which is what the lease duration counts from (a busy
  // machine may take a while between writing the lease and starting the candidate).
  const waited = Date.now() - Date.parse(renewTime);
  t.ok(waited >= 1000, `waited out the 1 s lease (${waited} ms)`);
  t.ok(waited < 2000, `took over soon after it expired (${waited} ms)`);
  const lease = await store.get<Lease>(LeaseKind, 'lock', 'ns');
  t.equal(lease.spec.holderIdentity, 'b');
  t.equal(lease.spec.leaseTransitions, 4, 'a takeover counts as a transition');
  await b.elector.stop();
  await b.done;
});

t.test('a leader that cannot renew within the renew deadline steps down', async (t) => {
  const memory = new MemoryStore();
  let failing = false;
  const store: ResourceStore = {
    get: (kind, name, ns) =>
      failing ? Promise.reject(new Error('api down')) : memory.get(kind, name, ns),
    list: (kind, options) => memory.list(kind, options),
    create: (kind, obj) => memory.create(kind, obj),
    update: (kind, obj) => memory.update(kind, obj),
    updateStatus: (kind, obj) => memory.updateStatus(kind, obj),
    delete: (kind, name, ns) => memory.delete(kind, name, ns),
    watch: (kind, options, handlers) => memory.watch(kind, options, handlers),
  };
  const a = candidate(store, 'a');
  await until(() => a.elector.isLeader());
  failing = true;
  const failedAt = Date.now();
  await a.done;
  const after = Date.now() - failedAt;
  t.notOk(a.elector.isLeader(), 'no longer leader');
  t.same(a.log, ['start', 'stop'], 'its work was told to stop');
  t.ok(after >= timing.renewDeadlineMs - timing.retryPeriodMs, `stepped down after ${after} ms`);
  t.ok(after < timing.leaseDurationMs + 200, 'before another could take the lease');
});

t.test('work that fails gives the lease up', async (t) => {
  const store = new MemoryStore();
  const elector = new LeaderElector({
    store,
    namespace: 'ns',
    name: 'lock',
    identity: 'a',
    ...timing,
  });
  await elector.run(() => {
    throw new Error('cannot start');
  });
  const lease = await store.get<Lease>(LeaseKind, 'lock', 'ns');
  t.equal(lease.spec.holderIdentity, '', 'released for another candidate');
});

t.test('timings that leave no room are refused', async (t) => {
  t.throws(
    () => checkLeaderElectionTiming({ leaseDurationMs: 10, renewDeadlineMs: 10, retryPeriodMs: 2 }),
    /lease duration must be longer than the renew deadline/,
  );
  t.throws(
    () => checkLeaderElectionTiming({ leaseDurationMs: 10, renewDeadlineMs: 2, retryPeriodMs: 2 }),
    /renew deadline must be longer than the retry period/,
  );
  t.throws(
    () => checkLeaderElectionTiming({ leaseDurationMs: 10, renewDeadlineMs: 5, retryPeriodMs: 0 }),
    /retry period must be positive/,
  );
});
