import { X509Certificate } from 'node:crypto';
import t, { type Test } from 'tap';
import {
  type ClusterTrustBundle,
  ClusterTrustBundleKind,
} from '../../src/api/cluster-trust-bundle.js';
import { type ConfigMap, ConfigMapKind } from '../../src/api/config-map.js';
import type { TrustBundleSource } from '../../src/api/trust-bundle-source.js';
import {
  type TrustManagerBundle,
  TrustManagerBundleKind,
} from '../../src/api/trust-manager-bundle.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { TrustBundleSources } from '../../src/volume-manager/trust-bundles/trust-bundle-sources.js';
import { until } from '../support/eventually.js';
import { FaultyStore } from '../support/faulty-store.js';
import { makeCA } from '../support/issuer-fixtures.js';

const [A, B] = (await Promise.all([makeCA(), makeCA()])).map((ca) =>
  new X509Certificate(ca.certificatePem).toString(),
) as [string, string];

function setup(t: Test) {
  const store = new MemoryStore();
  const changes: string[][] = [];
  const sources = new TrustBundleSources(store, { onChange: (users) => changes.push(users) });
  t.teardown(() => sources.stop());
  /** Resolves once the source's bundle (or problem) is what is expected. */
  const settles = (source: TrustBundleSource, expected: string) =>
    until(
      () => {
        const resolved = sources.resolve(source);
        return (resolved.ok ? resolved.pem : resolved.problem) === expected;
      },
      { what: `the source to resolve to ${expected.slice(0, 60)}` },
    );
  return { store, sources, changes, settles };
}

const configMap = (name: string, data: ConfigMap['data'], binaryData?: ConfigMap['binaryData']) =>
  ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'shop' },
    ...(data ? { data } : {}),
    ...(binaryData ? { binaryData } : {}),
  }) as ConfigMap;

const ctb = (name: string, trustBundle: string, signerName?: string, labels = {}) =>
  ({
    apiVersion: 'certificates.k8s.io/v1beta1',
    kind: 'ClusterTrustBundle',
    metadata: { name, labels },
    spec: { trustBundle, ...(signerName ? { signerName } : {}) },
  }) as ClusterTrustBundle;

t.test(
  'a ConfigMap source: one watch for its users, each change told to all of them',
  async (t) => {
    const { store, sources, changes, settles } = setup(t);
    const source: TrustBundleSource = {
      kind: 'configmap',
      namespace: 'shop',
      name: 'roots',
      key: 'ca.crt',
    };
    t.same(sources.resolve(source), { ok: false, problem: 'no volume uses this source' });
    sources.use('vol-1', source);
    sources.use('vol-2', { ...source });
    sources.use('vol-2', { ...source });
    t.equal(sources.watchCount, 1, 'one list+watch for the two volumes');
    t.same(sources.resolve(source), { ok: false, problem: 'not listed from the API yet' });

    // A wait that ends before the source exists names the source and why.
    const abort = new AbortController();
    const waiting = sources.waitUsable(source, abort.signal);
    await settles(source, 'ConfigMap "shop/roots" not found');
    abort.abort();
    await t.rejects(waiting, {
      message: 'configmap:shop/roots/ca.crt: ConfigMap "shop/roots" not found',
    });

    const usable = sources.waitUsable(source, new AbortController().signal);
    await store.create(ConfigMapKind, configMap('roots', { other: A }));
    await settles(source, 'ConfigMap "shop/roots" has no key "ca.crt"');
    const stored = await store.get<ConfigMap>(ConfigMapKind, 'roots', 'shop');
    await store.update(ConfigMapKind, { ...stored, data: { 'ca.crt': A } });
    t.equal(await usable, A, 'the wait ends with the bundle once it is usable');
    t.ok(
      changes.some((users) => users.sort().join() === 'vol-1,vol-2'),
      'a change is told to every user of the watch',
    );

    const again = await store.get<ConfigMap>(ConfigMapKind, 'roots', 'shop');
    await store.update(ConfigMapKind, {
      ...again,
      data: {},
      binaryData: { 'ca.crt': Buffer.from(B).toString('base64') },
    });
    await settles(source, B);
    await store.update(ConfigMapKind, {
      ...(await store.get<ConfigMap>(ConfigMapKind, 'roots', 'shop')),
      binaryData: { 'ca.crt': 'AAAA' },
    });
    await settles(source, 'no PEM CERTIFICATE block in ConfigMap "shop/roots" key "ca.crt"');

    sources.release('vol-1');
    t.equal(sources.watchCount, 1, 'still watched for vol-2');
    sources.release('vol-2');
    sources.release('vol-2');
    t.equal(sources.watchCount, 0, 'the last user stops the watch');
  },
);

t.test('a user joining a watch that has already listed is told, as of a change', async (t) => {
  // A plugin taking back its volumes after a restart tracks them one after the other: the
  // watch may list between two of them, and the later ones must not miss what it found.
  const { store, sources, changes, settles } = setup(t);
  const source: TrustBundleSource = {
    kind: 'configmap',
    namespace: 'shop',
    name: 'roots',
    key: 'ca.crt',
  };
  await store.create(ConfigMapKind, configMap('roots', { 'ca.crt': A }));
  sources.use('vol-1', source);
  await settles(source, A);
  await until(() => changes.some((users) => users.includes('vol-1')), {
    what: 'vol-1 to be told of the listed ConfigMap',
  });
  changes.length = 0;
  sources.use('vol-2', { ...source });
  await until(() => changes.length > 0, { what: 'vol-2 to be told' });
  t.same(changes, [['vol-2']], 'only the joining user is told');
  changes.length = 0;
  sources.use('vol-2', { ...source });
  sources.release('vol-2');
  await new Promise((resolve) => setImmediate(resolve));
  t.same(changes, [], 'using the same source again tells nothing');

  // A watch that has not listed yet tells each user when it lists, not when it is joined.
  const pending: TrustBundleSource = { ...source, name: 'later' };
  sources.use('vol-3', pending);
  sources.use('vol-4', { ...pending });
  await new Promise((resolve) => setImmediate(resolve));
  t.notOk(
    changes.some((users) => users.length === 1 && users[0] === 'vol-4'),
    'a join before the list is not told on its own',
  );
});

t.test('ClusterTrustBundles by name and by signer and label selector', async (t) => {
  const { store, sources, settles } = setup(t);
  const byName: TrustBundleSource = { kind: 'clustertrustbundle', name: 'corp' };
  const bySigner: TrustBundleSource = {
    kind: 'clustertrustbundle-signer',
    signerName: 'example.com/mesh',
    labelSelector: 'stage=live',
  };
  const everyOfSigner: TrustBundleSource = { ...bySigner, labelSelector: '' };
  sources.use('a', byName);
  sources.use('b', bySigner);
  sources.use('c', everyOfSigner);
  t.equal(sources.watchCount, 3);
  await settles(byName, 'ClusterTrustBundle "corp" not found');
  await settles(
    bySigner,
    'no ClusterTrustBundle of signer "example.com/mesh" selected by "stage=live"',
  );
  await settles(everyOfSigner, 'no ClusterTrustBundle of signer "example.com/mesh"');

  await store.create(ClusterTrustBundleKind, ctb('corp', A));
  await store.create(
    ClusterTrustBundleKind,
    ctb('example.com:mesh:one', A, 'example.com/mesh', { stage: 'live' }),
  );
  await store.create(
    ClusterTrustBundleKind,
    ctb('example.com:mesh:two', B + A, 'example.com/mesh', { stage: 'live' }),
  );
  await store.create(
    ClusterTrustBundleKind,
    ctb('example.com:mesh:old', B, 'example.com/mesh', { stage: 'old' }),
  );
  await store.create(
    ClusterTrustBundleKind,
    ctb('other.com:x:one', B, 'other.com/x', { stage: 'live' }),
  );
  await settles(byName, A);
  const merged = [A, B].sort((x, y) => {
    const dx = new X509Certificate(x).raw.toString('hex');
    const dy = new X509Certificate(y).raw.toString('hex');
    return dx < dy ? -1 : 1;
  });
  await settles(bySigner, merged.join(''));
  await settles(everyOfSigner, merged.join(''));

  // A volume moving to another source leaves the old watch.
  sources.use('a', bySigner);
  t.equal(sources.watchCount, 2, 'the by-name watch stopped with its last user');
});

t.test(
  "trust-manager's Bundle: its target ConfigMap under the Bundle's key, or an explicit one",
  async (t) => {
    const { store, sources, settles } = setup(t);
    const fromBundle: TrustBundleSource = { kind: 'bundle', namespace: 'shop', name: 'roots' };
    const explicit: TrustBundleSource = {
      kind: 'bundle',
      namespace: 'shop',
      name: 'roots',
      key: 'pem',
    };
    sources.use('a', fromBundle);
    sources.use('b', explicit);
    t.equal(sources.watchCount, 2, 'the Bundle and its ConfigMap, shared by both');
    await settles(fromBundle, 'Bundle "roots" not found');
    await store.create<TrustManagerBundle>(TrustManagerBundleKind, {
      apiVersion: 'trust.cert-manager.io/v1alpha1',
      kind: 'Bundle',
      metadata: { name: 'roots' },
      spec: {},
    });
    await settles(fromBundle, 'Bundle "roots" has no spec.target.configMap.key');
    const bundle = await store.get<TrustManagerBundle>(TrustManagerBundleKind, 'roots');
    await store.update(TrustManagerBundleKind, {
      ...bundle,
      spec: { target: { configMap: { key: 'root-certs.pem' } } },
    });
    await settles(fromBundle, 'ConfigMap "shop/roots" not found');
    await store.create(ConfigMapKind, configMap('roots', { 'root-certs.pem': A, pem: B }));
    await settles(fromBundle, A);
    await settles(explicit, B);
  },
);

t.test('stopped: no watch starts, a wait ends at once', async (t) => {
  const { sources } = setup(t);
  sources.stop();
  const source: TrustBundleSource = { kind: 'clustertrustbundle', name: 'corp' };
  sources.use('a', source);
  t.equal(sources.watchCount, 0);
  await t.rejects(sources.waitUsable(source, new AbortController().signal), {
    message: 'clustertrustbundle:corp: no volume uses this source',
  });
});

t.test('a source that cannot be listed says why while it waits', async (t) => {
  const store = new FaultyStore(new MemoryStore());
  store.listsFailWith = new Error('the server could not find the requested resource');
  const errors: string[] = [];
  const sources = new TrustBundleSources(store, {
    onChange: () => undefined,
    onError: (err) => errors.push(err.message),
  });
  t.teardown(() => sources.stop());
  const source: TrustBundleSource = { kind: 'clustertrustbundle', name: 'corp' };
  sources.use('a', source);
  const problem = await until(
    () => {
      const resolved = sources.resolve(source);
      return !resolved.ok && resolved.problem.includes('could not find') && resolved.problem;
    },
    { what: 'the list failure in the problem' },
  );
  t.match(
    problem,
    /^not listed from the API yet: .*the server could not find the requested resource/,
  );
  t.ok(errors.length > 0, 'the failure is told to the plugin (logged)');
});
