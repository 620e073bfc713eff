import { X509Certificate } from 'node:crypto';
import t, { type Test } from 'tap';
import { type ConfigMap, ConfigMapKind } from '../../src/api/config-map.js';
import type { VolumeCertificateSpec } from '../../src/api/volume-spec.js';
import { IssuanceError } from '../../src/renewal/issuance.js';
import { TrustBundleSources } from '../../src/renewal/trust-bundle-sources.js';
import { TrustBundleVolumes } from '../../src/renewal/trust-bundle-volumes.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { readAtomically, writeAtomically } from '../../src/volume/atomic-writer.js';
import type { Mounter } from '../../src/volume/mounter.js';
import { until } from '../support/eventually.js';
import { makeCA } from '../support/issuer-fixtures.js';
import { testParts } from './parts-fixture.js';

const [A, B, C] = (await Promise.all([makeCA(), makeCA(), makeCA()])).map((ca) =>
  new X509Certificate(ca.certificatePem).toString(),
) as [string, string, string];

const spec = {
  files: { ca: 'ca.crt', certificate: 'tls.crt', privateKey: 'tls.key' },
  trustBundle: { kind: 'configmap', namespace: 'shop', name: 'roots', key: 'ca.crt' },
} as VolumeCertificateSpec;

async function setup(t: Test, refresh: Mounter['refresh'] = async () => {}) {
  const { parts, logs } = await testParts(t);
  const store = new MemoryStore();
  let volumes: TrustBundleVolumes | undefined;
  const sources = new TrustBundleSources(store, { onChange: (ids) => volumes?.changed(ids) });
  t.teardown(() => sources.stop());
  volumes = new TrustBundleVolumes(
    { ...parts, mounter: { refresh } as unknown as Mounter },
    sources,
  );
  const setRoots = async (pem: string) => {
    const existing = await store
      .get<ConfigMap>(ConfigMapKind, 'roots', 'shop')
      .catch(() => undefined);
    const data = { 'ca.crt': pem };
    if (existing) await store.update(ConfigMapKind, { ...existing, data });
    else
      await store.create<ConfigMap>(ConfigMapKind, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'roots', namespace: 'shop' },
        data,
      });
  };
  const caFile = async (id: string) =>
    (await readAtomically(parts.dataRoot.dataDir(id)))?.get('ca.crt')?.toString();
  return { parts, logs, volumes, setRoots, caFile };
}

t.test(
  'changes while a write waits for the lock coalesce into one write of the newest',
  async (t) => {
    let writes = 0;
    const { parts, volumes, setRoots, caFile } = await setup(t, async () => {
      writes++;
    });
    await parts.dataRoot.ensureVolume('v');
    await writeAtomically(parts.dataRoot.dataDir('v'), {
      'tls.key': Buffer.from('key'),
      'tls.crt': Buffer.from('cert'),
      'ca.crt': Buffer.from('status ca'),
    });
    parts.registry.stateOf('v');
    await setRoots(A);
    volumes.track('v', spec, '/target');
    await until(async () => (await caFile('v')) === A, { what: 'the first bundle' });

    // A renewal holds the lock: the changes meanwhile wait, and the newest is written after.
    const release = await parts.registry.lock('v');
    await setRoots(B);
    await setRoots(C);
    await new Promise((resolve) => setImmediate(resolve));
    t.equal(await caFile('v'), A, 'nothing written while the lock is held');
    const before = writes;
    release();
    await until(async () => (await caFile('v')) === C, { what: 'the newest bundle' });
    // The second pass, for the change that came while the first waited, finds C written.
    (await parts.registry.lock('v'))();
    t.equal(writes - before, 1, 'one write for the two changes');
    const files = await readAtomically(parts.dataRoot.dataDir('v'));
    t.equal(files?.get('tls.key')?.toString(), 'key', 'key untouched');
    t.equal(files?.get('tls.crt')?.toString(), 'cert', 'certificate untouched');
  },
);

t.test('a failed write is logged and the next change writes again', async (t) => {
  let fail = true;
  const { parts, logs, volumes, setRoots, caFile } = await setup(t, async () => {
    if (fail) throw new Error('target gone bad');
  });
  await parts.dataRoot.ensureVolume('v');
  await writeAtomically(parts.dataRoot.dataDir('v'), { 'ca.crt': Buffer.from('status ca') });
  parts.registry.stateOf('v');
  await setRoots(A);
  volumes.track('v', spec, '/target');
  await until(
    () =>
      logs.some(
        ([level, , msg]) =>
          level === 'error' && msg?.startsWith('cannot write the new trust bundle'),
      ),
    { what: 'the failure to be logged' },
  );
  fail = false;
  await setRoots(B);
  await until(async () => (await caFile('v')) === B, { what: 'the next bundle' });
});

t.test(
  'a first issuance whose source went away has no CA to keep: it fails, naming the source',
  async (t) => {
    const { parts, volumes } = await setup(t);
    await parts.dataRoot.ensureVolume('v');
    const files = new Map([['ca.crt', Buffer.from('status ca')]]);
    await t.rejects(
      volumes.withBundle('v', spec, files),
      new IssuanceError(
        'trust bundle configmap:shop/roots/ca.crt not available: no volume uses this source',
        'failed',
      ),
    );
    const plain = { ...spec, trustBundle: undefined } as unknown as VolumeCertificateSpec;
    t.equal(
      await volumes.withBundle('v', plain, files),
      files,
      'no trust bundle: the files as issued',
    );
    volumes.track('v', plain, '/target');
  },
);

t.test('an unpublished volume is never written; the group of the files is kept', async (t) => {
  const { parts, volumes, setRoots, caFile } = await setup(t);
  for (const id of ['gone', 'live']) {
    await parts.dataRoot.ensureVolume(id);
    await writeAtomically(parts.dataRoot.dataDir(id), { 'ca.crt': Buffer.from('status ca') });
  }
  const gid = process.getgid?.() ?? 0;
  volumes.track('gone', spec, '/gone');
  volumes.track('live', { ...spec, fsGroup: gid }, '/live');
  parts.registry.stateOf('live');
  parts.registry.stateOf('gone');
  parts.registry.abort('gone', new Error('volume unpublished'));
  await setRoots(A);
  await until(async () => (await caFile('live')) === A, { what: 'the live volume to follow' });
  // The rewrite of the unpublished volume queued on its lock before this one.
  (await parts.registry.lock('gone'))();
  t.equal(await caFile('gone'), 'status ca', 'the unpublished volume was not written');
  volumes.untrack('gone');
  volumes.untrack('gone');
});
