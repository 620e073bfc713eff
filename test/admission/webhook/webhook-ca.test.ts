import t from 'tap';
import { WebhookCa } from '../../../src/admission/webhook/webhook-ca.js';
import {
  stillTrusted,
  WEBHOOK_CA_LIFETIME_MS,
} from '../../../src/admission/webhook/webhook-ca-policy.js';
import type { KubeObject, ResourceKind } from '../../../src/api/meta.js';
import { CA_CERT_KEY, type Secret, SecretKind, secretValue } from '../../../src/api/secret.js';
import { ManualClock } from '../../../src/base/clock.js';
import { StoreError } from '../../../src/store/errors.js';
import { MemoryStore } from '../../../src/store/memory-store.js';
import { until } from '../../support/eventually.js';
import { recordingLogger } from '../../support/recording-logger.js';

const NAMESPACE = 'cert-csi';
const NAME = 'cert-csi-webhook-ca';

function authority(store: MemoryStore, options: { clock?: ManualClock } = {}) {
  const logger = recordingLogger();
  const ca = new WebhookCa({
    store,
    namespace: NAMESPACE,
    secretName: NAME,
    logger,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  return { ca, logger };
}

const subjects = (secret: Secret | undefined, now = Date.now()) =>
  stillTrusted(secret ? secretValue(secret, CA_CERT_KEY) : undefined, now).map(
    (c) => c.serialNumber,
  );

t.test('the first replica creates the CA; one losing the race reads it back', async (t) => {
  const store = new MemoryStore();
  t.teardown(() => store.close());
  // Both replicas read before either writes: the race is certain, not left to timing.
  let calls = 0;
  let release: () => void = () => {};
  const first = new Promise<void>((resolve) => {
    release = resolve;
  });
  const barrier = Object.create(store) as MemoryStore;
  barrier.get = async <T extends KubeObject>(
    kind: ResourceKind,
    name: string,
    namespace?: string,
  ) => {
    calls++;
    if (calls === 1) await first;
    if (calls === 2) release();
    return store.get<T>(kind, name, namespace);
  };
  const a = authority(barrier);
  const b = authority(barrier);
  const [fromA, fromB] = await Promise.all([a.ca.ensure(), b.ca.ensure()]);
  t.same(fromA.data, fromB.data, 'both replicas sign with the same CA');
  const stored = await store.get<Secret>(SecretKind, NAME, NAMESPACE);
  t.same(stored.data, fromA.data);
  t.equal(stored.type, 'kubernetes.io/tls');
  t.same(Object.keys(stored.data ?? {}).sort(), ['ca.crt', 'tls.crt', 'tls.key']);
  t.equal(secretValue(stored, 'ca.crt'), secretValue(stored, 'tls.crt'), 'ca.crt trusts it');
  const created = [...a.logger.records, ...b.logger.records].filter(
    ([, , msg]) => msg === 'created the webhook CA',
  );
  t.equal(created.length, 1, 'one replica created it');
  t.notOk(JSON.stringify([a.logger.records, b.logger.records]).includes('PRIVATE KEY'));
  t.same(await a.ca.ensure(), stored, 'later calls use it as it is');
});

t.test('a CA near its end is rotated once; the old one stays trusted', async (t) => {
  const store = new MemoryStore();
  t.teardown(() => store.close());
  const clock = new ManualClock(Date.now());
  const a = authority(store, { clock });
  const b = authority(store, { clock });
  const first = await a.ca.ensure();
  clock.advance((WEBHOOK_CA_LIFETIME_MS * 2) / 3 + 60_000);
  const [fromA, fromB] = await Promise.all([a.ca.ensure(), b.ca.ensure()]);
  t.same(fromA.data, fromB.data, 'one rotation: both use the new CA');
  t.not(secretValue(fromA, 'tls.crt'), secretValue(first, 'tls.crt'), 'a new signing CA');
  const trusted = subjects(fromA, clock.now());
  t.equal(trusted.length, 2, 'ca.crt holds the new CA and the old one');
  t.same(trusted[1], subjects(first, clock.now())[0], 'the old one second');
  const rotated = [...a.logger.records, ...b.logger.records].filter(
    ([level, , msg]) => level === 'warn' && msg === 'rotated the webhook CA',
  );
  t.equal(rotated.length, 1);
  t.match(rotated[0]?.[1], { why: 'its CA is in the last third of its life' });
});

t.test(
  'the watch sees other replicas and remakes a deleted Secret, trusting the old CA',
  async (t) => {
    const store = new MemoryStore();
    t.teardown(() => store.close());
    const a = authority(store);
    const b = authority(store);
    a.ca.start();
    t.teardown(() => a.ca.stop());
    const changes: Secret[] = [];
    a.ca.onChange((secret) => changes.push(secret));
    const original = await a.ca.ensure();
    t.equal(changes.length, 1, 'its own Secret is a change');
    // Another replica replaces the CA (rotation): this one follows through the watch.
    await store.delete(SecretKind, NAME, NAMESPACE);
    const remade = await until(
      async () => {
        const current = a.ca.current;
        return current && current.data?.['tls.crt'] !== original.data?.['tls.crt'] && current;
      },
      { what: 'a new CA after the delete' },
    );
    const stored = await store.get<Secret>(SecretKind, NAME, NAMESPACE);
    t.same(stored.data, remade.data, 'the Secret was made again');
    t.equal(subjects(stored).length, 2, 'trusting the old CA too');
    t.same(subjects(stored)[1], subjects(original)[0]);
    const other = await b.ca.ensure();
    t.same(other.data, stored.data, 'the other replica uses it');
    t.ok(changes.length >= 2, 'listeners heard about it');
  },
);

t.test('a Secret another writer broke is repaired from the watch', async (t) => {
  const store = new MemoryStore();
  t.teardown(() => store.close());
  const a = authority(store);
  a.ca.start();
  t.teardown(() => a.ca.stop());
  const original = await a.ca.ensure();
  const stored = await store.get<Secret>(SecretKind, NAME, NAMESPACE);
  await store.update(SecretKind, { ...stored, data: { 'tls.crt': 'Z2FyYmFnZQ==' } });
  await until(
    async () => {
      const s = await store.get<Secret>(SecretKind, NAME, NAMESPACE);
      return s.data?.['tls.key'] !== undefined && s.data['tls.crt'] !== original.data?.['tls.crt'];
    },
    { what: 'a repaired Secret' },
  );
  t.ok(
    a.logger.records.some(
      ([, obj, msg]) =>
        msg === 'rotated the webhook CA' &&
        /cannot sign/.test(String((obj as { why: string }).why)),
    ),
    'the repair says why',
  );
});

t.test('a repair that cannot write is logged as an error', async (t) => {
  const store = new MemoryStore();
  t.teardown(() => store.close());
  await authority(store).ca.ensure();
  const readOnly = Object.create(store) as MemoryStore;
  readOnly.create = async () => {
    throw new StoreError('Forbidden', 'secrets is forbidden');
  };
  const logger = recordingLogger();
  const ca = new WebhookCa({ store: readOnly, namespace: NAMESPACE, secretName: NAME, logger });
  ca.start();
  t.teardown(() => ca.stop());
  await ca.ensure();
  await store.delete(SecretKind, NAME, NAMESPACE);
  const failed = await until(
    () =>
      logger.records.find(
        ([level, , msg]) => level === 'error' && msg === 'cannot repair the webhook CA Secret',
      ),
    { what: 'the failed repair' },
  );
  t.match(failed[1], {
    secret: 'cert-csi/cert-csi-webhook-ca',
    error: 'cannot write the webhook CA Secret cert-csi/cert-csi-webhook-ca: secrets is forbidden',
  });
});

t.test('a write that keeps failing is reported, naming the Secret', async (t) => {
  const store = new MemoryStore();
  t.teardown(() => store.close());
  const { ca } = authority(store);
  const broken = Object.create(store) as MemoryStore;
  broken.create = async () => {
    throw new Error('etcd is on fire');
  };
  const failing = new WebhookCa({
    store: broken,
    namespace: NAMESPACE,
    secretName: NAME,
    logger: recordingLogger(),
  });
  await t.rejects(
    failing.ensure(),
    /cannot write the webhook CA Secret cert-csi\/cert-csi-webhook-ca: etcd is on fire/,
  );
  t.ok(await ca.ensure(), 'the real store still works');
  // A race lost again and again (another writer always first, yet never readable) ends.
  const elusive = Object.create(store) as MemoryStore;
  elusive.get = async () => {
    throw new StoreError('NotFound', 'secrets "cert-csi-webhook-ca" not found');
  };
  let creates = 0;
  elusive.create = async () => {
    creates++;
    throw new StoreError('AlreadyExists', 'secrets "cert-csi-webhook-ca" already exists');
  };
  const losing = new WebhookCa({
    store: elusive,
    namespace: NAMESPACE,
    secretName: NAME,
    logger: recordingLogger(),
  });
  await t.rejects(
    losing.ensure(),
    /^cannot write the webhook CA Secret cert-csi\/cert-csi-webhook-ca: lost to other writers 5 times \(secrets "cert-csi-webhook-ca" already exists\)$/,
  );
  t.equal(creates, 5, 'read again and retried after each loss');
});
