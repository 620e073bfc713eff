import { createHash, X509Certificate } from 'node:crypto';
import t, { type Test } from 'tap';
import { type ConfigMap, ConfigMapKind } from '../../src/api/config-map.js';
import type { VolumeCertificateSpec } from '../../src/api/volume-spec.js';
import { readAtomically, writeAtomically } from '../../src/fs/atomic-writer.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import type { Mounter } from '../../src/volume/mounter.js';
import { writeJksPassword } from '../../src/volume/volume-secrets.js';
import { IssuanceError } from '../../src/volume-manager/issuance/issuance-error.js';
import { TrustBundleSources } from '../../src/volume-manager/trust-bundles/trust-bundle-sources.js';
import { TrustBundleVolumes } from '../../src/volume-manager/trust-bundles/trust-bundle-volumes.js';
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
  // Teardowns run last first: a rewrite still running when a test ends (it removes the old
  // generation after the new one shows) finishes before the data root is removed, which
  // otherwise meets a directory being emptied (ENOTEMPTY, seen once in a fresh-clone run).
  const tracked = volumes;
  t.teardown(() => tracked.settled());
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

/** Whether a JKS store's trailing integrity digest is the one of password (Java's check). */
function jksProtectedBy(store: Buffer, password: string): boolean {
  const secret = Buffer.alloc(password.length * 2);
  for (let i = 0; i < password.length; i++) secret.writeUInt16BE(password.charCodeAt(i), i * 2);
  const body = store.subarray(0, store.length - 20);
  const digest = createHash('sha1').update(secret).update('Mighty Aphrodite').update(body);
  return digest.digest().equals(store.subarray(store.length - 20));
}

t.test(
  'JKS stores follow the bundle; a rewrite that cannot build them keeps the previous generation',
  async (t) => {
    const { parts, logs, volumes, setRoots, caFile } = await setup(t);
    const leaf = await makeCA();
    const jksSpec = {
      ...spec,
      files: {
        ...spec.files,
        // The rewrite reads the password of the volume's secrets file, not this one.
        jks: { filename: 'ks.jks', truststoreFilename: 'ts.jks', password: 'stale-in-memory' },
      },
    } as VolumeCertificateSpec;
    const dataDir = parts.dataRoot.dataDir('v');
    const previous = {
      'tls.key': Buffer.from(leaf.keyPem),
      'tls.crt': Buffer.from(leaf.certificatePem),
      'ca.crt': Buffer.from('status ca'),
      'ks.jks': Buffer.from('previous keystore'),
      'ts.jks': Buffer.from('previous truststore'),
    };
    await parts.dataRoot.ensureVolume('v');
    await writeAtomically(dataDir, previous);
    parts.registry.stateOf('v');
    const failures = () =>
      logs.filter(([level, , msg]) => level === 'error' && msg?.startsWith('cannot build the JKS'));
    const kept = async (what: string) =>
      t.same(Object.fromEntries((await readAtomically(dataDir)) ?? []), previous, what);

    // No password file: nothing written, the volume named.
    await setRoots(A);
    volumes.track('v', jksSpec, '/target');
    await until(() => failures().length === 1, { what: 'the missing password to be logged' });
    t.match(failures()[0]?.[1], {
      volumeId: 'v',
      source: 'configmap:shop/roots/ca.crt',
      problem: /^no JKS password file .*jks-password$/,
    });
    await kept('no password: the previous generation, CA file included');

    // A key file that does not decode: the same.
    await writeJksPassword(parts.dataRoot, 'v', 'file-secret');
    previous['tls.key'] = Buffer.from('not a key');
    await writeAtomically(dataDir, previous);
    await setRoots(B);
    await until(() => failures().length === 2, { what: 'the bad key to be logged' });
    t.match(failures()[1]?.[1], {
      volumeId: 'v',
      problem: /^key file tls\.key: cannot decode private key/,
    });
    await kept('bad key: the previous generation');

    // Key and password good: CA file and both stores in one generation, under the file's password.
    previous['tls.key'] = Buffer.from(leaf.keyPem);
    await writeAtomically(dataDir, previous);
    await setRoots(B + C);
    await until(async () => (await caFile('v')) === B + C, { what: 'the bundle to be written' });
    const files = (await readAtomically(dataDir)) as Map<string, Buffer>;
    const [keystore, truststore] = [files.get('ks.jks'), files.get('ts.jks')] as [Buffer, Buffer];
    const [rawB, rawC, rawLeaf] = [B, C, leaf.certificatePem].map(
      (p) => new X509Certificate(p).raw,
    );
    t.ok(
      truststore.includes(rawB as Buffer) && truststore.includes(rawC as Buffer),
      'B and C trusted',
    );
    t.ok(keystore.includes(rawLeaf as Buffer), 'the key entry holds the certificate on disk');
    t.ok(keystore.includes(rawB as Buffer) && keystore.includes(rawC as Buffer));
    t.ok(jksProtectedBy(keystore, 'file-secret') && jksProtectedBy(truststore, 'file-secret'));
    t.notOk(jksProtectedBy(truststore, 'stale-in-memory'), 'not the password in memory');
    t.notMatch(JSON.stringify(logs), /file-secret|stale-in-memory/, 'no password in the logs');

    // An issuance builds the stores from the bundle too; one whose key is not its leaf's fails.
    const issuedFiles = new Map<string, Uint8Array>([
      ['tls.key', Buffer.from(leaf.keyPem)],
      ['tls.crt', Buffer.from(leaf.certificatePem)],
      ['ca.crt', Buffer.from('request ca')],
    ]);
    const written = await volumes.withBundle('v', jksSpec, issuedFiles);
    t.equal(Buffer.from(written.get('ca.crt') ?? []).toString(), B + C);
    t.ok(Buffer.from(written.get('ts.jks') ?? []).includes(rawC as Buffer), 'issued: C trusted');
    issuedFiles.set('tls.key', Buffer.from((await makeCA()).keyPem));
    await t.rejects(volumes.withBundle('v', jksSpec, issuedFiles), {
      name: 'IssuanceError',
      reason: 'invalid-certificate',
      message:
        'cannot build the JKS stores with trust bundle configmap:shop/roots/ca.crt: JKS entry "certificate": the private key does not match the leaf certificate',
    });
  },
);

t.test('settled waits for a rewrite already running, so nothing writes after a stop', async (t) => {
  const { parts, volumes } = await setup(t);
  await volumes.settled();
  t.pass('nothing running: settled at once');
  // The rewrite waits for the volume's lock, as behind a publish of the same volume.
  const release = await parts.registry.lock('vol-held');
  volumes.changed(['vol-held']);
  let settled = false;
  const settling = volumes.settled().then(() => {
    settled = true;
  });
  await new Promise((resolve) => setImmediate(resolve));
  t.notOk(settled, 'not while the rewrite waits');
  release();
  await settling;
  t.ok(settled, 'once it finished');
});
