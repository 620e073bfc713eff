import t from 'tap';
import {
  type CertificateRequest,
  CertificateRequestKind,
} from '../../src/api/certificate-request.js';
import { type Issuer, IssuerKind } from '../../src/api/issuer.js';
import { NODE_ID_HASH_LABEL } from '../../src/api/labels.js';
import { silentLogger } from '../../src/api/logger.js';
import { MemoryEventRecorder } from '../../src/controller/memory-event-recorder.js';
import { SharedInformers } from '../../src/controller/shared-informers.js';
import { approveEveryRequest } from '../../src/issuer/certificaterequests/approval-policy.js';
import {
  APPROVER_CONTROLLER,
  localIssuer,
  planLocalIssuance,
} from '../../src/issuer/certificaterequests/local-issuance.js';
import type { IssuerLookup } from '../../src/issuer/issuer-lookup.js';
import type { IssuerSigner } from '../../src/issuer/issuer-signer.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { embeddedCA, startPlugin } from '../support/plugin-harness.js';

function request(extra: { group?: string; isCA?: boolean } = {}): CertificateRequest {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'CertificateRequest',
    metadata: { name: 'r', namespace: 'ns', labels: { [NODE_ID_HASH_LABEL]: 'x' } },
    spec: {
      request: '',
      issuerRef: { name: 'i', ...(extra.group ? { group: extra.group } : {}) },
      ...(extra.isCA ? { isCA: true } : {}),
    },
  };
}

function issuer(spec: Issuer['spec'], ready = true): () => IssuerLookup {
  return () => ({
    issuer: {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name: 'i', namespace: 'ns' },
      spec,
      status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
    },
  });
}

const CA = issuer({ ca: { secretName: 's' } });
const SELF_SIGNED = issuer({ selfSigned: {} });
const ALL = new Set([
  APPROVER_CONTROLLER,
  'certificaterequests-issuer-ca',
  'certificaterequests-issuer-selfsigned',
]);
const without = (name: string) => new Set([...ALL].filter((n) => n !== name));

t.test('which requests skip the controllers: the decision table', async (t) => {
  const cases: Array<
    [
      string,
      CertificateRequest,
      () => IssuerLookup,
      Parameters<typeof planLocalIssuance>[2],
      string,
    ]
  > = [
    ['a ready CA issuer', request(), CA, { approval: approveEveryRequest, enabled: ALL }, 'sign'],
    [
      'a ready SelfSigned issuer',
      request(),
      SELF_SIGNED,
      { approval: approveEveryRequest, enabled: ALL },
      'sign',
    ],
    [
      'the approver does not run here',
      request(),
      CA,
      { approval: approveEveryRequest, enabled: without(APPROVER_CONTROLLER) },
      'the approver does not run here',
    ],
    [
      'the CA signer does not run here',
      request(),
      CA,
      { approval: approveEveryRequest, enabled: without('certificaterequests-issuer-ca') },
      'no ready CA or SelfSigned issuer of a running signer',
    ],
    [
      'another approval policy',
      request(),
      CA,
      { approval: () => ({ decision: 'abstain' }), enabled: ALL },
      'approval is not automatic',
    ],
    [
      'a CA certificate for a volume, the issuer not opted in',
      request({ isCA: true }),
      CA,
      { approval: approveEveryRequest, enabled: ALL },
      'a CA certificate for a volume is for the approver to deny',
    ],
    [
      'an issuer not ready',
      request(),
      issuer({ ca: { secretName: 's' } }, false),
      { approval: approveEveryRequest, enabled: ALL },
      'no ready CA or SelfSigned issuer of a running signer',
    ],
    [
      'an issuer not found',
      request(),
      () => ({ notFound: 'issuer.cert-manager.io "i" not found' }),
      { approval: approveEveryRequest, enabled: ALL },
      'no ready CA or SelfSigned issuer of a running signer',
    ],
    [
      'an issuer type this stack does not sign',
      request(),
      issuer({ vault: {} } as Issuer['spec']),
      { approval: approveEveryRequest, enabled: ALL },
      'no ready CA or SelfSigned issuer of a running signer',
    ],
    [
      'an external issuer group',
      request({ group: 'example.com' }),
      CA,
      { approval: approveEveryRequest, enabled: ALL },
      'no ready CA or SelfSigned issuer of a running signer',
    ],
  ];
  for (const [name, cr, lookup, context, want] of cases) {
    const plan = planLocalIssuance(cr, lookup, context);
    t.equal(plan.step === 'sign' ? 'sign' : plan.why, want, name);
  }
});

t.test(
  'a signing that does not issue writes nothing: the controllers take the request',
  async (t) => {
    const store = new MemoryStore();
    t.teardown(() => store.close());
    const created = await store.create<Issuer>(IssuerKind, {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name: 'i', namespace: 'ns' },
      spec: { ca: { secretName: 's' } },
    });
    await store.updateStatus(IssuerKind, {
      ...created,
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    });
    const informers = new SharedInformers(store);
    const events = new MemoryEventRecorder();
    const signs: string[] = [];
    // The CA Secret went away after the issuer was Ready: cert-manager's Pending SecretMissing.
    const missing: IssuerSigner = async () => {
      signs.push('asked');
      return { kind: 'caSecretMissing', secret: { namespace: 'ns', name: 's' } };
    };
    const issue = localIssuer({
      store,
      informers,
      config: {
        approval: approveEveryRequest,
        signers: new Map([['ca', missing]]),
        clusterResourceNamespace: 'kube-system',
      },
      enabled: ALL,
      events,
      logger: silentLogger,
      now: () => new Date(),
    });
    informers.start();
    t.teardown(() => informers.stop());
    await informers.waitForSync();
    t.equal(await issue(request()), undefined, 'left to the controllers');
    t.same(signs, ['asked'], 'the signer was asked');
    t.same((await store.list(CertificateRequestKind)).items, [], 'no request stored');
    t.same(events.eventsFor('CertificateRequest', 'r', 'ns'), [], 'no Event');
  },
);

t.test(
  'embedded mode: a volume request is created Approved and Issued in one write, with the controllers’ Events',
  async (t) => {
    const plugin = await startPlugin(t);
    const changes: Array<{ type: string; name: string; reasons: string[] }> = [];
    const watch = plugin.store.watch<CertificateRequest>(
      CertificateRequestKind,
      {},
      {
        onEvent: (event) =>
          changes.push({
            type: event.type,
            name: event.object.metadata.name,
            reasons: (event.object.status?.conditions ?? []).map(
              (c) => `${c.type}=${c.status}/${c.reason ?? ''}`,
            ),
          }),
        onError: () => {},
      },
    );
    t.teardown(() => watch.stop());
    await plugin.publish('csi-local', embeddedCA());
    const [created] = await plugin.requests();
    if (!created) throw new Error('no request');
    const name = created.metadata.name;
    t.same(
      changes.filter((c) => c.name === name),
      [{ type: 'ADDED', name, reasons: ['Approved=True/cert-manager.io', 'Ready=True/Issued'] }],
      'one write: created with the approval and the certificate',
    );
    t.ok(created.status?.certificate, 'the certificate is on the request');
    t.ok(created.status?.ca, 'and its CA');
    const events = plugin.events
      .eventsFor('CertificateRequest', name, 'sandbox')
      .map((e) => `${e.type} ${e.reason}`);
    t.same(events, ['Normal cert-manager.io', 'Normal CertificateIssued'], 'the Events it got');
    // Nothing the controllers' path adds: their next syncs find the request settled.
    await new Promise((resolve) => setTimeout(resolve, 200));
    t.equal(changes.filter((c) => c.name === name).length, 1, 'no write after it');
  },
);
