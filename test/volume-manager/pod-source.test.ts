import t from 'tap';
import { type Pod, PodKind } from '../../src/api/pod.js';
import { SharedInformers } from '../../src/controller/shared-informers.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import {
  contextPodSource,
  informerPodSource,
  nodePodScope,
} from '../../src/volume-manager/readiness/pod-source.js';
import { until } from '../support/eventually.js';

function pod(name: string, node: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'shop' },
    spec: { nodeName: node },
  };
}

t.test('the informer source: this node only, the pod of the volume only', async (t) => {
  const store = new MemoryStore();
  const mine = await store.create(PodKind, pod('web-0', 'node-a'));
  await store.create(PodKind, pod('web-1', 'node-b'));
  const informers = new SharedInformers(store, { scopes: new Map([nodePodScope('node-a')]) });
  t.teardown(() => informers.stop());
  const source = informerPodSource(informers);
  t.equal(source.changes, true);
  await source.start();
  const info = {
    name: 'web-0',
    namespace: 'shop',
    uid: mine.metadata.uid ?? '',
    serviceAccountName: '',
  };
  t.equal(source.get(info, {})?.metadata.name, 'web-0');
  t.equal(
    source.get({ ...info, uid: '' }, {})?.metadata.name,
    'web-0',
    'no uid in the context: by name',
  );
  t.equal(
    source.get({ ...info, uid: 'another-pod' }, {}),
    undefined,
    'a recreated pod is not the volume pod',
  );
  t.equal(
    source.get({ ...info, name: 'web-1' }, {}),
    undefined,
    "another node's pod is not listed",
  );

  const changes: string[] = [];
  const stop = source.onChange((namespace, name) => changes.push(`${namespace}/${name}`));
  await store.updateStatus(PodKind, { ...mine, status: { podIP: '10.0.0.1' } });
  await until(() => changes.length === 1, { what: 'the change' });
  t.same(changes, ['shop/web-0']);
  stop();
  await store.delete(PodKind, 'web-0', 'shop');
  await until(() => source.get(info, {}) === undefined, { what: 'the delete' });
  t.same(changes, ['shop/web-0'], 'no listener after its removal');
});

t.test('the context source: the IPs of csi.storage.k8s.io/pod.ips, nothing else', async (t) => {
  const info = { name: 'web-0', namespace: 'shop', uid: 'u', serviceAccountName: '' };
  t.equal(contextPodSource.changes, false);
  await contextPodSource.start();
  t.same(
    contextPodSource.get(info, { 'csi.storage.k8s.io/pod.ips': ' 10.0.0.1 ,fd00::1,' })?.status,
    {
      podIP: '10.0.0.1',
      podIPs: [{ ip: '10.0.0.1' }, { ip: 'fd00::1' }],
    },
  );
  t.same(contextPodSource.get(info, {})?.status, { podIPs: [] }, 'no key: no IP');
  contextPodSource.onChange(() => t.fail('never changes'))();
});
