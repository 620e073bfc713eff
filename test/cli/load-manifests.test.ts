import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { ClusterIssuerKind, type Issuer, IssuerKind } from '../../src/api/issuer.js';
import { type Secret, SecretKind } from '../../src/api/secret.js';
import { loadManifests } from '../../src/cli/load-manifests.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { rejectionMessage } from '../support/eventually.js';

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
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n',
        /unsupported apiVersion\/kind "v1\/ConfigMap"/,
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
