import t from 'tap';
import {
  type RunningPublish,
  VolumeRegistry,
} from '../../src/volume-manager/state/volume-registry.js';
import type { PublishRequest, PublishResult } from '../../src/volume-manager/volume-publisher.js';
import { INLINE_CAPABILITY } from '../support/publish-call.js';

/** A promise with its settle functions, to hold work open while the registry is inspected. */
function gate<T>(): { promise: Promise<T>; resolve(value: T): void; reject(err: Error): void } {
  let resolve: (value: T) => void = () => {};
  let reject: (err: Error) => void = () => {};
  const promise = new Promise<T>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  return { promise, resolve, reject };
}

function request(volumeId: string, serviceAccountTokens?: string): PublishRequest {
  return {
    volumeId,
    targetPath: `/pods/${volumeId}/mount`,
    volumeContext: {},
    // Only volumeId and the tokens matter to the registry.
    spec: {} as PublishRequest['spec'],
    capability: INLINE_CAPABILITY,
    ...(serviceAccountTokens !== undefined ? { serviceAccountTokens } : {}),
  };
}

t.test('a state lives until aborted; the next one is fresh', async (t) => {
  const registry = new VolumeRegistry();
  t.equal(registry.liveState('csi-a'), undefined, 'no state before the volume is known');
  t.notOk(registry.has('csi-a'));
  const first = registry.stateOf('csi-a');
  t.equal(registry.stateOf('csi-a'), first, 'the same state while it is live');
  t.equal(registry.liveState('csi-a'), first);
  registry.abort('csi-a', new Error('volume unpublished'));
  t.ok(first.abort.signal.aborted);
  t.equal(registry.liveState('csi-a'), undefined, 'an aborted state is not live');
  t.ok(registry.has('csi-a'), 'an aborted state is still known');
  const second = registry.stateOf('csi-a');
  t.not(second, first, 'a new state replaces the aborted one');
  t.notOk(second.abort.signal.aborted);
  registry.abort('csi-unknown', new Error('nothing to abort'));
  t.notOk(registry.has('csi-unknown'), 'aborting an unknown volume creates nothing');
});

t.test('abortAll aborts every state; volumeIds are sorted', async (t) => {
  const registry = new VolumeRegistry();
  const states = ['csi-c', 'csi-a', 'csi-b'].map((id) => registry.stateOf(id));
  t.same(registry.volumeIds(), ['csi-a', 'csi-b', 'csi-c']);
  registry.abortAll(new Error('plugin stopping'));
  t.ok(states.every((state) => state.abort.signal.aborted));
  t.equal(states[0]?.abort.signal.reason.message, 'plugin stopping');
});

t.test('tokens: the newest of a publish that has any; forget drops them', async (t) => {
  const registry = new VolumeRegistry();
  registry.keepTokens(request('csi-a', 'first'));
  registry.keepTokens(request('csi-a'));
  t.equal(registry.tokensOf('csi-a'), 'first', 'a publish without tokens keeps the earlier ones');
  registry.keepTokens(request('csi-a', 'second'));
  t.equal(registry.tokensOf('csi-a'), 'second');

  registry.stateOf('csi-a');
  registry.forget('csi-a');
  t.notOk(registry.has('csi-a'));
  t.equal(registry.tokensOf('csi-a'), undefined, 'forget drops the tokens');
});

t.test(
  'a running publish registers nothing until registerPublish; its joiners tokens wait for it',
  async (t) => {
    const registry = new VolumeRegistry();
    const refused = gate<PublishResult>();
    const work = registry.startPublish(request('csi-a', 'own'), () => refused.promise);
    const running = registry.runningPublish('csi-a');
    t.equal(running?.registered, false, 'not registered while its checks run');
    const joined = registry.joinPublish(running as RunningPublish, request('csi-a', 'joiner'));
    t.equal(joined, work, 'a joiner shares the work');
    t.equal(registry.tokensOf('csi-a'), undefined, 'no tokens kept before registration');
    t.notOk(registry.has('csi-a'), 'no state either');
    refused.reject(new Error('refused'));
    await t.rejects(work, /refused/);
    t.same(registry.volumeIds(), [], 'a refused publish leaves no volume');
    t.equal(registry.tokensOf('csi-a'), undefined, 'and no tokens');

    const admitted = gate<PublishResult>();
    const second = registry.startPublish(request('csi-a', 'own'), () => admitted.promise);
    const current = registry.runningPublish('csi-a') as RunningPublish;
    void registry.joinPublish(current, request('csi-a', 'joined-early'));
    void registry.joinPublish(current, request('csi-a'));
    const state = registry.registerPublish('csi-a');
    t.equal(registry.liveState('csi-a'), state, 'registered: the volume has a state');
    t.equal(
      registry.tokensOf('csi-a'),
      'joined-early',
      'the newest tokens, a joiner without any aside',
    );
    void registry.joinPublish(current, request('csi-a', 'joined-late'));
    t.equal(registry.tokensOf('csi-a'), 'joined-late', 'after registration, kept at once');
    admitted.resolve({ issued: true });
    await second;

    t.equal(registry.registerPublish('csi-b'), registry.liveState('csi-b'), 'no publish: a state');
    t.equal(registry.tokensOf('csi-b'), undefined, 'and no tokens');
  },
);

t.test('a publish is known as running until it settles, fulfilled or rejected', async (t) => {
  const registry = new VolumeRegistry();
  const ok = gate<PublishResult>();
  const work = registry.startPublish(request('csi-a'), () => ok.promise);
  t.equal(registry.runningPublish('csi-a')?.work, work);
  t.equal(registry.runningPublish('csi-a')?.request.volumeId, 'csi-a');
  ok.resolve({ issued: true });
  t.same(await work, { issued: true });
  t.equal(registry.runningPublish('csi-a'), undefined, 'forgotten once done');

  const failing = gate<PublishResult>();
  const failed = registry.startPublish(request('csi-a'), () => failing.promise);
  failing.reject(new Error('denied'));
  await t.rejects(failed, /denied/);
  t.equal(registry.runningPublish('csi-a'), undefined, 'forgotten once failed');
});

t.test('a renewal is known as running until it settles', async (t) => {
  const registry = new VolumeRegistry();
  const done = gate<undefined>();
  const work = registry.startRenewal('csi-a', () => done.promise);
  t.equal(registry.runningRenewal('csi-a'), work);
  t.equal(registry.runningRenewal('csi-b'), undefined, 'per volume');
  done.resolve(undefined);
  await work;
  t.equal(registry.runningRenewal('csi-a'), undefined);
});

t.test(
  'overlapping unpublishes: unpublishing until the last one ends, even a failed one',
  async (t) => {
    const registry = new VolumeRegistry();
    const first = gate<void>();
    const second = gate<void>();
    const one = registry.whileUnpublishing('csi-a', () => first.promise);
    t.ok(registry.isUnpublishing('csi-a'), 'unpublishing at once, before any await');
    const two = registry.whileUnpublishing('csi-a', () => second.promise);
    first.reject(new Error('unmount failed'));
    await t.rejects(one, /unmount failed/);
    t.ok(registry.isUnpublishing('csi-a'), 'the second unpublish still runs');
    second.resolve();
    await two;
    t.notOk(registry.isUnpublishing('csi-a'));
  },
);

t.test('lock: holders of one volume run one at a time, other volumes do not wait', async (t) => {
  const registry = new VolumeRegistry();
  const order: string[] = [];
  const releaseA = await registry.lock('csi-a');
  const waiting = registry.lock('csi-a').then((release) => {
    order.push('second holder of csi-a');
    release();
  });
  const releaseB = await registry.lock('csi-b');
  order.push('csi-b');
  releaseB();
  order.push('first holder of csi-a releases');
  releaseA();
  await waiting;
  t.same(order, ['csi-b', 'first holder of csi-a releases', 'second holder of csi-a']);
});
