import { readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { type Certificate, CertificateKind } from '../../src/api/certificate.js';
import {
  type CertificateRequest,
  CertificateRequestKind,
} from '../../src/api/certificate-request.js';
import { ClusterIssuerKind } from '../../src/api/issuer.js';
import { lockDirectory } from '../../src/fs/directory-lock.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { StateDirectory } from '../../src/store/state-directory/state-directory.js';
import { StateDirectoryReader } from '../../src/store/state-directory/state-directory-reader.js';
import {
  certificate,
  certificateRequest,
  withIssuerRef,
  withNamespace,
  withSpec,
} from '../support/builders/index.js';
import { ODD_KINDS, oddFileMaker } from '../support/odd-files.js';
import { tempDir } from '../support/temp-dir.js';

/** A state dir written by a persisted MemoryStore (as the embedded plugin does), still open. */
async function persisted(t: Test): Promise<{ dir: string; store: MemoryStore }> {
  const dir = await tempDir(t, 'cert-csi-state-');
  const store = await MemoryStore.open({ persistence: new StateDirectory(dir) });
  t.teardown(() => store.close());
  return { dir, store };
}

t.test('get: the stored object, as the owning store has it; NotFound when absent', async (t) => {
  const { dir, store } = await persisted(t);
  // The owner holds its lock: the reader neither needs nor takes it.
  const lock = await lockDirectory(dir, 'state dir');
  t.teardown(() => lock.release());
  const created = await store.create(
    CertificateKind,
    certificate(
      'web',
      withNamespace('sandbox'),
      withSpec({ secretName: 'web-tls', issuerRef: { name: 'ca' } }),
    ),
  );
  const written = await store.updateStatus<Certificate>(CertificateKind, {
    ...created,
    status: { revision: 2 },
  });
  const longName = `w${'e'.repeat(251)}b`;
  await store.create(
    CertificateKind,
    certificate(
      longName,
      withNamespace('sandbox'),
      withSpec({ secretName: `${longName}-tls`, issuerRef: { name: 'ca' } }),
    ),
  );
  const reader = new StateDirectoryReader(dir);
  t.same(await reader.get<Certificate>(CertificateKind, 'web', 'sandbox'), written);
  t.equal(
    (await reader.get<Certificate>(CertificateKind, longName, 'sandbox')).metadata.name,
    longName,
    'a name stored under its hash',
  );
  await t.rejects(reader.get(CertificateKind, 'nope', 'sandbox'), {
    name: 'StoreError',
    reason: 'NotFound',
    message: /certificates.cert-manager.io "nope" not found/,
  });
  await t.rejects(reader.get(CertificateKind, 'web', 'other'), {
    name: 'StoreError',
    reason: 'NotFound',
  });
});

t.test('get and list refuse names that are not names before touching a path', async (t) => {
  const { dir } = await persisted(t);
  const reader = new StateDirectoryReader(dir);
  await t.rejects(reader.get(CertificateKind, '../../etc/passwd', 'sandbox'), {
    name: 'StoreError',
    reason: 'Invalid',
  });
  await t.rejects(reader.get(CertificateKind, 'web', '..'), {
    name: 'StoreError',
    reason: 'Invalid',
  });
  await t.rejects(reader.get(CertificateKind, 'web'), { name: 'StoreError', reason: 'Invalid' });
  await t.rejects(reader.list(CertificateRequestKind, { namespace: 'a/b' }), {
    name: 'StoreError',
    reason: 'Invalid',
  });
  await t.rejects(reader.list(CertificateRequestKind, { namespace: 'x', labelSelector: 'a=b' }), {
    reason: 'Invalid',
    message: /label selectors/,
  });
  await t.rejects(
    reader.list(CertificateRequestKind, { namespace: 'x', fieldSelector: 'metadata.name=a' }),
    { reason: 'Invalid', message: /field selectors/ },
  );
});

t.test('list: one namespace, in name order; what is not an object file is skipped', async (t) => {
  const { dir, store } = await persisted(t);
  for (const name of ['web-2', 'web-1'])
    await store.create(
      CertificateRequestKind,
      certificateRequest(name, withNamespace('sandbox'), withIssuerRef({ name: 'ca' })),
    );
  await store.create(
    CertificateRequestKind,
    certificateRequest('elsewhere', withNamespace('other'), withIssuerRef({ name: 'ca' })),
  );
  const reader = new StateDirectoryReader(dir);
  const names = async () =>
    (
      await reader.list<CertificateRequest>(CertificateRequestKind, { namespace: 'sandbox' })
    ).items.map((r) => [r.metadata.name, r.kind, r.apiVersion]);
  const expected = [
    ['web-1', 'CertificateRequest', 'cert-manager.io/v1'],
    ['web-2', 'CertificateRequest', 'cert-manager.io/v1'],
  ];
  t.same(await names(), expected);
  const nsDir = join(dir, 'cert-manager.io', 'certificaterequests', 'sandbox');
  // A write in progress, a file the plugin set aside, something else: none is an object.
  await writeFile(join(nsDir, '.web-3.json.tmp-0a1b'), '{');
  await writeFile(join(nsDir, 'web-4.json.corrupt-2026-01-01'), '{');
  await writeFile(join(nsDir, 'notes.txt'), 'hello');
  t.same(await names(), expected, 'skipped');
  const before = await readdir(nsDir);
  await writeFile(join(nsDir, 'web-5.json'), '{"metadata": {}}');
  await t.rejects(names(), {
    reason: 'InternalError',
    message: /unreadable state file .*web-5\.json: no metadata\.name/,
  });
  t.same(
    (await readdir(nsDir)).sort(),
    [...before, 'web-5.json'].sort(),
    'nothing moved aside or removed: the plugin owns the dir',
  );
  t.same(
    (await reader.list(CertificateRequestKind, { namespace: 'empty' })).items,
    [],
    'a namespace never written: none',
  );
  t.same((await reader.list(ClusterIssuerKind)).items, [], 'a cluster-scoped kind never written');
});

t.test('list without a namespace: every namespace, namespace by namespace', async (t) => {
  const { dir, store } = await persisted(t);
  const reader = new StateDirectoryReader(dir);
  t.same((await reader.list(CertificateRequestKind)).items, [], 'none written yet');
  await store.create(
    CertificateRequestKind,
    certificateRequest('web-1', withNamespace('sandbox'), withIssuerRef({ name: 'ca' })),
  );
  await store.create(
    CertificateRequestKind,
    certificateRequest('api-1', withNamespace('apps'), withIssuerRef({ name: 'ca' })),
  );
  await store.create(
    CertificateRequestKind,
    certificateRequest('web-0', withNamespace('sandbox'), withIssuerRef({ name: 'ca' })),
  );
  // Not a namespace dir: skipped.
  await writeFile(join(dir, 'cert-manager.io', 'certificaterequests', 'stray.txt'), 'x');
  const items = (await reader.list<CertificateRequest>(CertificateRequestKind)).items;
  t.same(
    items.map((r) => `${r.metadata.namespace}/${r.metadata.name}`),
    ['apps/api-1', 'sandbox/web-0', 'sandbox/web-1'],
  );
  // A file where the kind's dir should be cannot be listed: said, not read as empty.
  await writeFile(join(dir, 'cert-manager.io', 'certificates'), 'x');
  await t.rejects(reader.list(CertificateKind), { code: 'ENOTDIR' });
});

t.test('a state dir that does not exist reads as empty and is not created', async (t) => {
  const dir = join(await tempDir(t), 'absent');
  const reader = new StateDirectoryReader(dir);
  await t.rejects(reader.get(CertificateKind, 'web', 'sandbox'), {
    name: 'StoreError',
    reason: 'NotFound',
  });
  t.same((await reader.list(CertificateRequestKind, { namespace: 'sandbox' })).items, []);
  await t.rejects(readdir(dir), { code: 'ENOENT' });
});

t.test('an object file that is no regular file is an error naming it, never a wait', async (t) => {
  const { dir, store } = await persisted(t);
  await store.create(
    CertificateKind,
    certificate(
      'good',
      withNamespace('sandbox'),
      withSpec({ secretName: 'good-tls', issuerRef: { name: 'ca' } }),
    ),
  );
  const reader = new StateDirectoryReader(dir);
  const make = await oddFileMaker(t);
  const namespaceDir = join(dir, 'cert-manager.io', 'certificates', 'sandbox');
  for (const kind of ODD_KINDS) {
    const path = join(namespaceDir, `odd-${kind}.json`);
    await make(
      path,
      kind,
      JSON.stringify(
        certificate(
          `odd-${kind}`,
          withNamespace('sandbox'),
          withSpec({ secretName: `odd-${kind}-tls`, issuerRef: { name: 'ca' } }),
        ),
      ),
    );
    const message = new RegExp(
      `^unreadable state file ${path}: it is not a regular file but a (FIFO|symbolic link|socket|directory): only regular files are read$`,
    );
    await t.rejects(reader.get(CertificateKind, `odd-${kind}`, 'sandbox'), {
      name: 'StoreError',
      reason: 'InternalError',
      message,
    });
    await t.rejects(reader.list(CertificateKind, { namespace: 'sandbox' }), { message }, kind);
    await rm(path, { recursive: true });
  }
  // Other errors are the file system's own: here a file where the namespace dir belongs.
  await writeFile(join(dir, 'cert-manager.io', 'certificates', 'other'), 'in the way');
  await t.rejects(reader.get(CertificateKind, 'x', 'other'), { code: 'ENOTDIR' });
  await t.rejects(reader.list(CertificateKind, { namespace: 'other' }), { code: 'ENOTDIR' });
});
