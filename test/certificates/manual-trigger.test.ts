import t from 'tap';
import { type Certificate, CertificateKind } from '../../src/api/certificate.js';
import type { Condition } from '../../src/api/conditions.js';
import type { KubeObject, ResourceKind } from '../../src/api/meta.js';
import {
  CertificateNotFoundError,
  MANUAL_TRIGGER_ATTEMPTS,
  MANUALLY_TRIGGERED_MESSAGE,
  MANUALLY_TRIGGERED_REASON,
  manuallyTriggeredStatus,
  triggerManualIssuance,
} from '../../src/certificates/manual-trigger.js';
import { StoreError } from '../../src/store/errors.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import {
  certificate,
  certificateFrom,
  withConditions,
  withGeneration,
  withNamespace,
  withSpec,
  withStatus,
} from '../support/builders/index.js';

const NOW = new Date('2026-03-01T10:00:00.500Z');
const EARLIER = '2026-02-01T00:00:00Z';
const ref = { namespace: 'sandbox', name: 'web' };

const web = certificate(
  'web',
  withNamespace('sandbox'),
  withSpec({ secretName: 'web-tls', issuerRef: { name: 'ca' } }),
  withStatus({ revision: 3, notAfter: '2026-06-01T00:00:00Z' }),
);

const ready: Condition = {
  type: 'Ready',
  status: 'True',
  reason: 'Ready',
  message: 'Certificate is up to date and has not expired',
  lastTransitionTime: EARLIER,
  observedGeneration: 2,
};
const manual = (lastTransitionTime: string, observedGeneration = 2): Condition => ({
  type: 'Issuing',
  status: 'True',
  reason: 'ManuallyTriggered',
  message: 'Certificate re-issuance manually triggered',
  observedGeneration,
  lastTransitionTime,
});

t.test("cmctl's reason and message, word for word", (t) => {
  t.equal(MANUALLY_TRIGGERED_REASON, 'ManuallyTriggered');
  t.equal(MANUALLY_TRIGGERED_MESSAGE, 'Certificate re-issuance manually triggered');
  t.end();
});

t.test('manuallyTriggeredStatus: before → conditions after', (t) => {
  const cases: Array<[string, Condition[] | undefined, Condition[]]> = [
    ['no conditions: Issuing added, transition now', undefined, [manual('2026-03-01T10:00:00Z')]],
    ['Ready kept, Issuing appended', [ready], [ready, manual('2026-03-01T10:00:00Z')]],
    [
      'Issuing False (a failure): a transition, so now',
      [ready, { type: 'Issuing', status: 'False', reason: 'Failed', lastTransitionTime: EARLIER }],
      [ready, manual('2026-03-01T10:00:00Z')],
    ],
    [
      'Issuing True already: reason and message replaced, transition time kept',
      [
        {
          type: 'Issuing',
          status: 'True',
          reason: 'Expiring',
          message: 'Renewing certificate as renewal was scheduled at …',
          lastTransitionTime: EARLIER,
          observedGeneration: 1,
        },
        ready,
      ],
      [manual(EARLIER), ready],
    ],
  ];
  for (const [name, before, after] of cases) {
    const status = manuallyTriggeredStatus(
      certificateFrom(web, withGeneration(2), ...(before ? [withConditions(before)] : [])),
      NOW,
    );
    t.same(status.conditions, after, name);
    t.equal(status.revision, 3, `${name}: the rest of the status is kept`);
  }
  const noGeneration = manuallyTriggeredStatus(certificateFrom(web), NOW);
  t.notOk(
    'observedGeneration' in (noGeneration.conditions?.[0] ?? {}),
    'no generation: no observedGeneration',
  );
  t.end();
});

async function storeWith(cert: Certificate): Promise<MemoryStore> {
  const store = new MemoryStore();
  const created = await store.create(CertificateKind, cert);
  await store.updateStatus(CertificateKind, { ...created, status: cert.status });
  return store;
}

t.test('writes the condition with a status update; other fields untouched', async (t) => {
  const store = await storeWith(certificateFrom(web, withConditions([ready])));
  const before = await store.get<Certificate>(CertificateKind, 'web', 'sandbox');
  const result = await triggerManualIssuance(store, ref, () => NOW);
  t.equal(result.alreadyIssuing, false);
  const after = await store.get<Certificate>(CertificateKind, 'web', 'sandbox');
  t.same(after.status?.conditions, [ready, manual('2026-03-01T10:00:00Z', 1)]);
  t.same(after.spec, before.spec);
  t.equal(after.metadata.generation, before.metadata.generation, 'a status write: same generation');
  t.same(result.certificate, after);
  const again = await triggerManualIssuance(store, ref, () => new Date('2026-03-02T00:00:00Z'));
  t.equal(again.alreadyIssuing, true, 'a second call finds it issuing');
  t.same(
    (await store.get<Certificate>(CertificateKind, 'web', 'sandbox')).status?.conditions,
    [ready, manual('2026-03-01T10:00:00Z', 1)],
    'and keeps the first transition time',
  );
});

t.test('an unknown Certificate: CertificateNotFoundError, nothing written', async (t) => {
  const store = await storeWith(certificateFrom(web));
  await t.rejects(
    triggerManualIssuance(store, { namespace: 'sandbox', name: 'nope' }, () => NOW),
    {
      name: 'CertificateNotFoundError',
      message: 'Certificate sandbox/nope not found',
    },
  );
  await t.rejects(
    triggerManualIssuance(store, { namespace: 'other', name: 'web' }, () => NOW),
    CertificateNotFoundError,
  );
});

/** A store whose status writes meet a writer that got there first, `conflicts` times. */
class RacingStore extends MemoryStore {
  statusWrites = 0;
  conflicts = 0;
  override async updateStatus<T extends KubeObject>(kind: ResourceKind, obj: T): Promise<T> {
    this.statusWrites++;
    if (this.conflicts > 0) {
      this.conflicts--;
      // Another controller writes first: obj's resourceVersion is now stale.
      const current = await this.get<Certificate>(kind, obj.metadata.name, obj.metadata.namespace);
      await super.updateStatus(kind, {
        ...current,
        status: { ...current.status, renewalTime: `2026-05-0${this.conflicts + 1}T00:00:00Z` },
      });
    }
    return super.updateStatus(kind, obj);
  }
}

t.test('a Conflict is retried on a fresh read, keeping what the other writer wrote', async (t) => {
  const store = new RacingStore();
  const created = await store.create(CertificateKind, certificateFrom(web));
  await store.updateStatus(CertificateKind, { ...created, status: { conditions: [ready] } });
  store.statusWrites = 0;
  store.conflicts = 2;
  const result = await triggerManualIssuance(store, ref, () => NOW);
  t.equal(store.statusWrites, 3, 'two conflicts, then the write');
  t.equal(result.certificate.status?.renewalTime, '2026-05-01T00:00:00Z', "the other's write kept");
  t.same(result.certificate.status?.conditions, [ready, manual('2026-03-01T10:00:00Z', 1)]);
});

t.test('Conflicts without end: given up after a few attempts, with the reason', async (t) => {
  const store = new RacingStore();
  await store.create(CertificateKind, certificateFrom(web));
  store.conflicts = 1000;
  await t.rejects(
    triggerManualIssuance(store, ref, () => NOW),
    {
      message: /^failed to trigger issuance of Certificate sandbox\/web: .*(Conflict|modified)/,
    },
  );
  t.equal(store.statusWrites, MANUAL_TRIGGER_ATTEMPTS);
});

t.test('other failures are reported as cmctl words them', async (t) => {
  const forbidden = new StoreError('Forbidden', 'certificates/status is forbidden for user x');
  const failing = {
    get: async () => {
      throw forbidden;
    },
    updateStatus: async () => {
      throw forbidden;
    },
  };
  await t.rejects(
    triggerManualIssuance(failing, ref, () => NOW),
    {
      message:
        'failed to trigger issuance of Certificate sandbox/web: certificates/status is forbidden for user x',
    },
  );
  const store = await storeWith(certificateFrom(web));
  const deleting = {
    get: store.get.bind(store),
    updateStatus: async () => {
      throw new StoreError('NotFound', 'gone');
    },
  };
  await t.rejects(
    triggerManualIssuance(deleting, ref, () => NOW),
    CertificateNotFoundError,
  );
  const writeForbidden = { get: store.get.bind(store), updateStatus: failing.updateStatus };
  await t.rejects(
    triggerManualIssuance(writeForbidden, ref, () => NOW),
    {
      message: /^failed to trigger issuance of Certificate sandbox\/web: .*forbidden/,
    },
  );
});
