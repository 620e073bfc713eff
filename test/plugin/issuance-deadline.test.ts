import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { status } from '@grpc/grpc-js';
import t, { type Test } from 'tap';
import { until } from '../support/eventually.js';
import { embeddedCA, type PluginHarness, startPlugin } from '../support/plugin-harness.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

// The second test's deadlines, started on the system clock once all five publishes wait.
const DEADLINE_MS = 1_000;

/** A publish's outcome, captured so the test can look at it before and after it settles. */
function track(promise: Promise<unknown>) {
  const state: { settled: boolean; code?: number | undefined; details?: string | undefined } = {
    settled: false,
  };
  const done = promise.then(
    () => {
      state.settled = true;
    },
    (err: { code?: number; details?: string }) => {
      state.settled = true;
      state.code = err.code;
      state.details = err.details;
    },
  );
  return { state, done };
}

const nobodySigns = {
  'csi.cert-manager.io/issuer-name': 'remote',
  'csi.cert-manager.io/issuer-kind': 'RemoteIssuer',
  'csi.cert-manager.io/issuer-group': 'example.com',
  'csi.cert-manager.io/key-algorithm': 'ECDSA',
};

/** Full GCs all along: on Node 20 they lose an AbortSignal.timeout inside AbortSignal.any. */
function gcPressure(t: Test): void {
  const collect = setInterval(gc, 250);
  t.teardown(() => clearInterval(collect));
}

/** Five publishes that wait for a signer that never answers, once their requests exist. */
async function fiveStuck(p: PluginHarness) {
  const stuck = ['a', 'b', 'c', 'd', 'e'].map((n) =>
    track(p.publish(`csi-unsigned-${n}`, nobodySigns)),
  );
  await until(async () => (await p.requests()).length === 5, {
    what: 'the five requests to be created',
    timeoutMs: 60_000,
  });
  return stuck;
}

t.test(
  'publishes whose issuer never answers hold no issuance slot, under GC pressure',
  async (t) => {
    gcPressure(t);
    // The default --max-concurrent-issuances (4): five waits would fill it.
    // Held deadlines: the five never time out on their own, so the ordinary publish has all
    // the time a loaded machine needs (it used to race a 20 s deadline).
    const p = await startPlugin(t, { heldDeadlines: true });
    const stuck = await fiveStuck(p);

    const ordinary = track(
      p.publish('csi-ordinary', embeddedCA({ 'csi.cert-manager.io/key-algorithm': 'ECDSA' })),
    );
    // Whichever comes first: the ordinary publish, the five ending, or a long time.
    await until(() => ordinary.state.settled || stuck.every((s) => s.state.settled), {
      what: 'the ordinary publish or the five stuck ones to settle',
      timeoutMs: 100_000,
      intervalMs: 50,
    });
    t.ok(ordinary.state.settled, 'the ordinary publish completed');
    t.equal(ordinary.state.code, undefined, 'the ordinary publish succeeded');
    t.equal(
      stuck.filter((s) => s.state.settled).length,
      0,
      'while the five were still waiting for their signer',
    );
    const metadata = JSON.parse(await readFile(p.dataRoot.metadataPath('csi-ordinary'), 'utf8'));
    t.ok(metadata.notAfter, 'the ordinary volume holds a certificate');

    // Done with them: an unpublish ends a publish in flight.
    for (const n of ['a', 'b', 'c', 'd', 'e']) {
      await p.unpublish(`csi-unsigned-${n}`, join(p.dir, 'pods', `csi-unsigned-${n}`, 'mount'));
    }
    await Promise.all(stuck.map((s) => s.done));
  },
);

t.test(
  'publishes whose issuer never answers end at their deadline under GC pressure',
  async (t) => {
    gcPressure(t);
    // Held until all five wait (a busy machine can take longer than any fixed deadline to
    // create five requests), then real timers: GC pressure must not lose them.
    const p = await startPlugin(t, { heldDeadlines: true });
    const stuck = await fiveStuck(p);
    for (const n of ['a', 'b', 'c', 'd', 'e']) {
      await until(() => p.waiting.take(`csi-unsigned-${n}`), {
        what: `csi-unsigned-${n} to wait for its request`,
        timeoutMs: 60_000,
      });
    }
    t.equal(p.deadlines.release(DEADLINE_MS), 5, 'five deadlines started');
    await Promise.all(stuck.map((s) => s.done));
    for (const { state } of stuck) {
      t.equal(state.code, status.DEADLINE_EXCEEDED, 'a stuck publish ends with DEADLINE_EXCEEDED');
      t.match(state.details, /^waiting for request: request "[0-9a-f-]+" /);
    }
  },
);

t.test('an attempt whose deadline passes before its request exists says so', async (t) => {
  // A 1 ms deadline passes while the publish is still checking and queueing.
  const p = await startPlugin(t, { publishTimeoutMs: 1 });
  const err = await p.publish('csi-no-time', embeddedCA()).then(
    () => undefined,
    (e: { code?: number; details?: string }) => e,
  );
  t.equal(err?.code, status.DEADLINE_EXCEEDED);
  t.match(err?.details, /^timed out before the CertificateRequest was created$/);
  t.same(await p.requests(), [], 'no request was created');
});
