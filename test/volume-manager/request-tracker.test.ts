import t from 'tap';
import {
  type CertificateRequest,
  CertificateRequestKind,
} from '../../src/api/certificate-request.js';
import { hashIdentifier, NODE_ID_HASH_LABEL, VOLUME_ID_HASH_LABEL } from '../../src/api/labels.js';
import { SharedInformers } from '../../src/controller/shared-informers.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import {
  nodeRequestScope,
  RequestTracker,
} from '../../src/volume-manager/issuance/request-tracker.js';
import {
  certificateRequest,
  withCsr,
  withIssuerRef,
  withNamespace,
} from '../support/builders/index.js';
import { FaultyStore } from '../support/faulty-store.js';

function labelled(name: string, node: string, volume: string): CertificateRequest {
  const request = certificateRequest(
    name,
    withNamespace('ns'),
    withIssuerRef({ name: 'i' }),
    withCsr('csr'),
  );
  request.metadata.labels = {
    [NODE_ID_HASH_LABEL]: hashIdentifier(node),
    [VOLUME_ID_HASH_LABEL]: hashIdentifier(volume),
  };
  return request;
}

t.test("a shared request informer: a volume's requests are this node's only", async (t) => {
  const store = new MemoryStore();
  await store.create(CertificateRequestKind, labelled('mine', 'node-a', 'csi-1'));
  await store.create(CertificateRequestKind, labelled('theirs', 'node-b', 'csi-1'));
  await store.create(CertificateRequestKind, labelled('other-volume', 'node-a', 'csi-2'));
  const informers = new SharedInformers(store);
  t.teardown(() => informers.stop());
  const tracker = new RequestTracker(
    informers.informer<CertificateRequest>(CertificateRequestKind),
    'node-a',
  );
  await tracker.start();
  t.same(
    tracker.requestsOfVolume('csi-1').map((r) => r.metadata.name),
    ['mine'],
    "node-b's request with the same volume id is not this node's",
  );
  t.same(
    tracker.requestsOfVolume('csi-2').map((r) => r.metadata.name),
    ['other-volume'],
  );
  t.equal(tracker.get('ns', 'theirs')?.metadata.name, 'theirs', 'the cache is shared');
});

t.test('alone, a node lists only its own requests (nodeRequestScope)', async (t) => {
  const memory = new MemoryStore();
  await memory.create(CertificateRequestKind, labelled('mine', 'node-a', 'csi-1'));
  await memory.create(CertificateRequestKind, labelled('theirs', 'node-b', 'csi-1'));
  const store = new FaultyStore(memory);

  const informers = new SharedInformers(store, { scopes: nodeRequestScope('node-a') });
  t.teardown(() => informers.stop());
  const tracker = new RequestTracker(
    informers.informer<CertificateRequest>(CertificateRequestKind),
    'node-a',
  );
  await tracker.start();
  t.same(store.listCalls, [
    `certificaterequests?${NODE_ID_HASH_LABEL}=${hashIdentifier('node-a')}`,
  ]);
  t.equal(tracker.get('ns', 'theirs'), undefined, 'never listed');
  t.same(
    tracker.requestsOfVolume('csi-1').map((r) => r.metadata.name),
    ['mine'],
  );
});

t.test('a start aborted before the cache syncs rejects', async (t) => {
  const memory = new MemoryStore();
  const down = new FaultyStore(memory);
  down.listsFailWith = new Error('API down');

  const informers = new SharedInformers(down, { onError: () => {} });
  const tracker = new RequestTracker(
    informers.informer<CertificateRequest>(CertificateRequestKind),
    'node-a',
  );
  const aborted = new AbortController();
  aborted.abort();
  await t.rejects(tracker.start(aborted.signal), /stopped before its cache synced/);
  const later = new AbortController();
  const starting = tracker.start(later.signal);
  setImmediate(() => later.abort());
  await t.rejects(starting, /stopped before its cache synced/);
});
