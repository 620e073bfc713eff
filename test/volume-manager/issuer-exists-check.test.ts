import t from 'tap';
import { ClusterIssuerKind, IssuerKind } from '../../src/api/issuer.js';
import type { VolumeCertificateSpec } from '../../src/api/volume-spec.js';
import { parseVolumeAttributes } from '../../src/attributes/volume-attributes.js';
import { SharedInformers } from '../../src/controller/shared-informers.js';
import { issuerCaches } from '../../src/issuer/issuer-lookup.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import {
  allChecks,
  type IssuanceCheck,
  issuerExistsCheck,
} from '../../src/volume-manager/issuance/issuance-check.js';
import type { PublishRequest } from '../../src/volume-manager/volume-publisher.js';
import { clusterIssuer, issuer, withNamespace } from '../support/builders/index.js';
import { INLINE_CAPABILITY } from '../support/publish-call.js';

// Embedded mode: a volume naming an issuer its store does not have is refused at publish (no
// issuer can come later: the manifests load at start), with what to set when the other kind
// has the name; read through the same caches the plugin uses.

function publish(attributes: Record<string, string>): PublishRequest {
  const volumeContext = {
    'csi.storage.k8s.io/ephemeral': 'true',
    'csi.storage.k8s.io/pod.name': 'app-0',
    'csi.storage.k8s.io/pod.namespace': 'sandbox',
    ...attributes,
  };
  const parsed = parseVolumeAttributes(volumeContext);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  const spec: VolumeCertificateSpec = parsed.spec;
  return {
    volumeId: 'csi-1',
    targetPath: '/t',
    spec,
    volumeContext,
    capability: INLINE_CAPABILITY,
  };
}

t.test('an issuer missing from the store is refused as failed, with the kind to set', async (t) => {
  const store = new MemoryStore();
  await store.create(ClusterIssuerKind, clusterIssuer('embedded-ca'));
  await store.create(IssuerKind, issuer('team-ca', withNamespace('sandbox')));
  await store.create(IssuerKind, issuer('elsewhere-ca', withNamespace('other')));
  const informers = new SharedInformers(store);
  t.teardown(() => informers.stop());
  const { lookup } = issuerCaches(informers);
  informers.start();
  await informers.waitForSync();
  const check = issuerExistsCheck(lookup);
  const name = 'csi.cert-manager.io/issuer-name';
  const kind = 'csi.cert-manager.io/issuer-kind';
  const cases: Array<[string, Record<string, string>, string | undefined]> = [
    ['a ClusterIssuer that exists', { [name]: 'embedded-ca', [kind]: 'ClusterIssuer' }, undefined],
    ["an Issuer in the pod's namespace", { [name]: 'team-ca' }, undefined],
    [
      'issuer-kind forgotten: the default Issuer is not there, the ClusterIssuer is',
      { [name]: 'embedded-ca' },
      'Issuer "embedded-ca" not found in namespace sandbox; a ClusterIssuer of that name exists: set csi.cert-manager.io/issuer-kind: ClusterIssuer',
    ],
    [
      'the legacy key named as written',
      { [name]: 'embedded-ca', 'csi.certmanager.k8s.io/issuer-kind': 'Issuer' },
      'Issuer "embedded-ca" not found in namespace sandbox; a ClusterIssuer of that name exists: set csi.certmanager.k8s.io/issuer-kind: ClusterIssuer',
    ],
    [
      'ClusterIssuer asked, an Issuer of that name in the namespace',
      { [name]: 'team-ca', [kind]: 'ClusterIssuer' },
      'ClusterIssuer "team-ca" not found; an Issuer of that name exists: set csi.cert-manager.io/issuer-kind: Issuer',
    ],
    [
      "an Issuer of another namespace is not the pod's",
      { [name]: 'elsewhere-ca' },
      'Issuer "elsewhere-ca" not found in namespace sandbox',
    ],
    [
      'no issuer of either kind',
      { [name]: 'nope', [kind]: 'ClusterIssuer' },
      'ClusterIssuer "nope" not found',
    ],
    [
      'an issuer of another group is not the store to know',
      { [name]: 'acme', 'csi.cert-manager.io/issuer-group': 'example.com' },
      undefined,
    ],
  ];
  const suffix = "; this store's issuers come from the node's --manifests at start";
  for (const [what, attributes, message] of cases) {
    t.same(
      check(publish(attributes)),
      message === undefined ? undefined : { message: message + suffix, reason: 'failed' },
      what,
    );
  }
});

t.test('allChecks answers the first refusal, in order', async (t) => {
  const asked: string[] = [];
  const check =
    (name: string, refuse: boolean): IssuanceCheck =>
    () => {
      asked.push(name);
      return refuse ? { message: name, reason: 'denied' } : undefined;
    };
  const request = publish({ 'csi.cert-manager.io/issuer-name': 'x' });
  t.equal(allChecks(check('a', false), check('b', false))(request), undefined);
  t.same(allChecks(check('c', false), check('d', true), check('e', true))(request), {
    message: 'd',
    reason: 'denied',
  });
  t.same(asked, ['a', 'b', 'c', 'd'], 'the checks after a refusal are not asked');
});
