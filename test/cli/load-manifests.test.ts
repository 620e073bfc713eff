import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { type Certificate, CertificateKind } from '../../src/api/certificate.js';
import { type ConfigMap, ConfigMapKind } from '../../src/api/config-map.js';
import { ClusterIssuerKind, type Issuer, IssuerKind } from '../../src/api/issuer.js';
import { type Secret, SecretKind } from '../../src/api/secret.js';
import { embeddedAdmission } from '../../src/cli/node/embedded-admission.js';
import { loadManifests, MANIFEST_FILE_MAX_BYTES } from '../../src/cli/node/load-manifests.js';
import { writeAtomically } from '../../src/fs/atomic-writer.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { rejectionMessage } from '../support/eventually.js';
import { type OddKind, oddFileMaker } from '../support/odd-files.js';

async function dirWith(t: Test, files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'cert-csi-manifests-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  return dir;
}

t.test(
  'loads Secrets, Issuers and ClusterIssuers, kubectl style; a second load replaces',
  async (t) => {
    const dir = await dirWith(t, {
      'a.yaml': [
        'apiVersion: v1',
        'kind: Secret',
        'metadata: {name: ca}',
        'data: {tls.crt: YQ==}',
        'stringData: {tls.key: plain}',
        '---',
        '---',
        'apiVersion: cert-manager.io/v1',
        'kind: Issuer',
        'metadata: {name: ca, namespace: team}',
        'spec: {ca: {secretName: ca}}',
      ].join('\n'),
      'b.json': JSON.stringify({
        apiVersion: 'cert-manager.io/v1',
        kind: 'ClusterIssuer',
        metadata: { name: 'self', resourceVersion: '7' },
        spec: { selfSigned: {} },
      }),
      'ignored.txt': 'not a manifest',
    });
    const store = new MemoryStore();
    t.equal(
      await loadManifests(store, dir),
      3,
      'three objects; empty documents and other files skipped',
    );
    const secret = await store.get<Secret>(SecretKind, 'ca', 'default');
    t.same(
      secret.data,
      { 'tls.crt': 'YQ==', 'tls.key': Buffer.from('plain').toString('base64') },
      'no namespace means default; stringData folded into data',
    );
    t.equal(secret.stringData, undefined);
    t.ok(await store.get<Issuer>(IssuerKind, 'ca', 'team'));
    t.ok(await store.get<Issuer>(ClusterIssuerKind, 'self'));
    t.equal(await loadManifests(store, dir), 3, 'loading again replaces instead of failing');
  },
);

t.test(
  'a bad file stops the load before anything is written, naming file and document',
  async (t) => {
    const cases: Array<[string, string, RegExp]> = [
      ['bad.yaml', 'a: [unclosed', /bad\.yaml: invalid YAML/],
      [
        'list.yaml',
        '- a\n- b\n',
        /list\.yaml: expected an object with apiVersion, kind and metadata/,
      ],
      ['scalar.yaml', 'hello\n', /scalar\.yaml: expected an object/],
      [
        'kind.yaml',
        'apiVersion: v1\nkind: Service\nmetadata: {name: x}\n',
        /unsupported apiVersion\/kind "v1\/Service": only v1 Secret and ConfigMap and cert-manager\.io\/v1 Issuer, ClusterIssuer and Certificate can be loaded$/,
      ],
      ['noname.yaml', 'apiVersion: v1\nkind: Secret\nmetadata: {}\n', /metadata\.name is required/],
      [
        'scoped.yaml',
        'apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata: {name: x, namespace: y}\nspec: {}\n',
        /ClusterIssuer is cluster-scoped: remove metadata\.namespace/,
      ],
      [
        'second.yaml',
        'apiVersion: v1\nkind: Secret\nmetadata: {name: ok}\n---\napiVersion: v1\nkind: Secret\n',
        /second\.yaml \(document 2\): metadata\.name is required/,
      ],
    ];
    for (const [name, text, expected] of cases) {
      const dir = await dirWith(t, {
        'a-good.yaml': 'apiVersion: v1\nkind: Secret\nmetadata: {name: good}\n',
        [name]: text,
      });
      const store = new MemoryStore();
      t.match(await rejectionMessage(loadManifests(store, dir)), expected, name);
      t.same((await store.list(SecretKind)).items, [], `${name}: nothing written`);
    }
    t.match(
      await rejectionMessage(loadManifests(new MemoryStore(), '/nonexistent/manifests')),
      /\/nonexistent\/manifests: cannot read directory/,
    );
    const invalid = await dirWith(t, {
      'bad-name.yaml': 'apiVersion: v1\nkind: Secret\nmetadata: {name: Not_A_Name}\n',
    });
    t.match(
      await rejectionMessage(loadManifests(new MemoryStore(), invalid)),
      /bad-name\.yaml: .*Not_A_Name/,
      'a store refusal names the file',
    );
  },
);

const CERTIFICATE = [
  'apiVersion: cert-manager.io/v1',
  'kind: Certificate',
  'metadata: {name: web, namespace: team}',
  'spec:',
  '  secretName: web-tls',
  '  issuerRef: {name: ca, kind: Issuer}',
  '  dnsNames: [web.team.svc]',
].join('\n');

t.test('loads Certificates; a second load replaces them, status untouched', async (t) => {
  const dir = await dirWith(t, { 'web.yaml': CERTIFICATE });
  const store = new MemoryStore({ admit: embeddedAdmission });
  t.equal(await loadManifests(store, dir), 1);
  const web = await store.get<Certificate>(CertificateKind, 'web', 'team');
  t.same(web.spec.dnsNames, ['web.team.svc']);
  await store.updateStatus<Certificate>(CertificateKind, { ...web, status: { revision: 1 } });
  await writeFile(join(dir, 'web.yaml'), CERTIFICATE.replace('web.team.svc', 'web.example.com'));
  t.equal(await loadManifests(store, dir), 1, 'loading again replaces');
  const replaced = await store.get<Certificate>(CertificateKind, 'web', 'team');
  t.same(replaced.spec.dnsNames, ['web.example.com']);
  t.equal(replaced.metadata.generation, 2);
  t.same(replaced.status, { revision: 1 }, "the controllers' status is kept");
});

t.test(
  'an invalid Certificate stops the load before anything is written, naming its fields',
  async (t) => {
    const dir = await dirWith(t, {
      'a-secret.yaml': 'apiVersion: v1\nkind: Secret\nmetadata: {name: good}\n',
      'b-good.yaml': CERTIFICATE,
      'c-bad.yaml': [
        'apiVersion: cert-manager.io/v1',
        'kind: Certificate',
        'metadata: {name: bad}',
        'spec:',
        '  issuerRef: {name: ca, kind: Issur}',
        '  ipAddresses: [not-an-ip]',
      ].join('\n'),
    });
    const store = new MemoryStore({ admit: embeddedAdmission });
    const message = await rejectionMessage(loadManifests(store, dir));
    t.equal(
      message,
      `${join(dir, 'c-bad.yaml')}: Certificate.cert-manager.io "bad" is invalid: [spec.secretName: Required value: must be specified, spec.issuerRef.kind: Invalid value: "Issur": must be one of Issuer or ClusterIssuer (did you forget to set spec.issuerRef.kind.group?), spec.ipAddresses[0]: Invalid value: "not-an-ip": invalid IP address]`,
      'the file, the object and every field, as the API server words a webhook refusal',
    );
    t.same(
      (await store.list(SecretKind)).items,
      [],
      'the Secret of an earlier file is not written',
    );
    t.same((await store.list(CertificateKind)).items, [], 'nor the valid Certificate');

    // Without the check phase, the store alone would still refuse it, but only after the
    // files before it were written: the check phase is what keeps a load all or nothing.
    const unchecked = new MemoryStore({ admit: embeddedAdmission });
    const late = await rejectionMessage(loadManifests(unchecked, dir, { admit: () => [] }));
    t.match(
      late,
      /c-bad\.yaml: Certificate\.cert-manager\.io "bad" is invalid: \[spec\.secretName/,
    );
    t.equal((await unchecked.list(SecretKind)).items.length, 1, 'the earlier files were written');
  },
);

t.test('a Certificate field of the wrong type is refused naming the file', async (t) => {
  const dir = await dirWith(t, {
    'a-secret.yaml': 'apiVersion: v1\nkind: Secret\nmetadata: {name: good}\n',
    'typo.yaml': CERTIFICATE.replace('dnsNames: [web.team.svc]', 'ipAddresses: 10.0.0.1'),
  });
  const store = new MemoryStore({ admit: embeddedAdmission });
  t.match(
    await rejectionMessage(loadManifests(store, dir)),
    /typo\.yaml: cannot validate Certificate "web": /,
  );
  t.same((await store.list(SecretKind)).items, [], 'nothing written');
});

t.test('an update the store refuses names the file', async (t) => {
  const dir = await dirWith(t, { 'web.yaml': CERTIFICATE });
  // The check phase sees each object as a create; the store checks an update against the
  // stored object, so a rule about changes is enforced there.
  const store = new MemoryStore({
    admit: (kind, object, old) =>
      old && JSON.stringify(old) !== JSON.stringify(object)
        ? [`${kind.kind}: Forbidden: no changes`]
        : [],
  });
  await store.create(CertificateKind, {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name: 'web', namespace: 'team' },
    spec: { secretName: 'old', issuerRef: { name: 'ca' } },
  } as Certificate);
  const err = await rejectionMessage(loadManifests(store, dir));
  t.equal(
    err,
    `${join(dir, 'web.yaml')}: Certificate.cert-manager.io "web" is invalid: Certificate: Forbidden: no changes`,
  );
  t.equal(
    (await store.get<Certificate>(CertificateKind, 'web', 'team')).spec.secretName,
    'old',
    'the stored object is kept',
  );
});

t.test('loads ConfigMaps, the trust bundles volumes may follow', async (t) => {
  const dir = await dirWith(t, {
    'roots.yaml': [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata: {name: roots, namespace: sandbox}',
      'data: {ca.crt: "-----BEGIN CERTIFICATE-----"}',
    ].join('\n'),
  });
  const store = new MemoryStore();
  t.equal(await loadManifests(store, dir), 1);
  const roots = await store.get<ConfigMap>(ConfigMapKind, 'roots', 'sandbox');
  t.same(roots.data, { 'ca.crt': '-----BEGIN CERTIFICATE-----' });
});

t.test('a manifest that is no regular file stops the load at once, naming it', async (t) => {
  const make = await oddFileMaker(t);
  const issuer = JSON.stringify({
    apiVersion: 'cert-manager.io/v1',
    kind: 'ClusterIssuer',
    metadata: { name: 'self' },
    spec: { selfSigned: {} },
  });
  const refusedAs = {
    fifo: 'a FIFO',
    'link-to-fifo': 'a FIFO',
    socket: 'a socket',
    directory: 'a directory',
  };
  for (const [kind, what] of Object.entries(refusedAs)) {
    const dir = await dirWith(t, { 'a-first.json': issuer });
    const file = join(dir, 'odd.yaml');
    await make(file, kind as OddKind);
    const store = new MemoryStore();
    t.equal(
      await rejectionMessage(loadManifests(store, dir)),
      `${file}: is not a regular file but ${what}: only regular files are read`,
      kind,
    );
    t.same((await store.list(ClusterIssuerKind)).items, [], `${kind}: nothing was written`);
  }
  // Over the cap.
  const large = await dirWith(t, { 'large.yaml': `# ${' '.repeat(MANIFEST_FILE_MAX_BYTES)}` });
  t.equal(
    await rejectionMessage(loadManifests(new MemoryStore(), large)),
    `${join(large, 'large.yaml')}: is larger than 16 MiB, the most read for it: not read`,
  );
  // A dangling link: the read's own error.
  const dangling = await dirWith(t, {});
  await symlink(join(dangling, 'gone'), join(dangling, 'gone.yaml'));
  t.match(
    await rejectionMessage(loadManifests(new MemoryStore(), dangling)),
    `${join(dangling, 'gone.yaml')}: cannot read file: ENOENT`,
  );
});

t.test('a ConfigMap mount: each manifest a link into ..data is followed', async (t) => {
  // kubelet's layout: name -> ..data/name, ..data -> the current generation dir.
  const dir = await dirWith(t, {});
  await writeAtomically(dir, {
    'issuer.json': Buffer.from(
      JSON.stringify({
        apiVersion: 'cert-manager.io/v1',
        kind: 'ClusterIssuer',
        metadata: { name: 'mounted' },
        spec: { selfSigned: {} },
      }),
    ),
  });
  const store = new MemoryStore();
  t.equal(await loadManifests(store, dir), 1);
  t.ok(await store.get<Issuer>(ClusterIssuerKind, 'mounted'));
});
