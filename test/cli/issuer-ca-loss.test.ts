import { copyFile, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { type Secret, SecretKind } from '../../src/api/secret.js';
import { startEmbeddedPlugin } from '../../src/cli/node/embedded-plugin.js';
import { loadManifests } from '../../src/cli/node/load-manifests.js';
import { EmbeddedCaLostError } from '../../src/issuer/ca-guard.js';
import { createSelfSignedCa } from '../../src/pki/certificate.js';
import { encodePrivateKey, generatePrivateKey } from '../../src/pki/keys.js';
import type { MemoryStore } from '../../src/store/memory-store.js';
import { createMounter } from '../../src/volume/create-mounter.js';
import { volumeManagerSettings } from '../../src/volume-manager/settings.js';
import { CERTIFICATE_WAIT_MS, secretText } from '../support/certificate-stack.js';
import { runCli } from '../support/cli-process.js';
import { DEPLOY_DIR } from '../support/cluster-harness.js';
import { rejection, until } from '../support/eventually.js';
import { opensslVerify } from '../support/issuer-fixtures.js';
import { connectClient } from '../support/plugin-harness.js';
import { inlineVolumeCall, podInfo } from '../support/publish-call.js';
import { type LogRecord, recordingLogger } from '../support/recording-logger.js';
import { tempDir } from '../support/temp-dir.js';
import { nodeArgs } from './embedded-node-args.js';

// The lost-CA guard covers every CA an Issuer or ClusterIssuer signs with,
// not only embedded-ca. The bootstrap pattern (deploy/manifests/bootstrap-ca.yaml: SelfSigned
// ClusterIssuer -> CA Certificate -> CA ClusterIssuer) loaded with --manifests; its CA Secret's
// file lost while what it signed exists must refuse to start, before any Certificate
// controller could issue a new CA.

const NS = 'cert-csi';
const CA = 'cert-csi-ca';
const VOLUME = `csi-${'6c'.repeat(32)}`;
const REFUSED = 'refusing to start: a CA an issuer signs with is lost';

const secretPath = (dir: string, namespace: string, name: string) =>
  join(dir, 'state', 'core', 'secrets', namespace, `${name}.json`);
const manifestsOf = (dir: string) => join(dir, 'manifests');

/** The embedded plugin's options on dir's data root, state dir and manifests. */
function pluginOptions(dir: string, logger: ReturnType<typeof recordingLogger>) {
  return {
    endpoint: { kind: 'unix' as const, path: join(dir, 'csi.sock') },
    settings: volumeManagerSettings({ nodeId: 'issuer-ca-loss' }),
    driverName: 'csi.cert-manager.io',
    version: 'test',
    dataRoot: join(dir, 'volumes'),
    stateDir: join(dir, 'state'),
    mounter: createMounter({ mode: 'direct' }),
    logger,
    clusterResourceNamespace: NS,
    // As `cert-csi node --manifests` does at every start.
    beforeIssuers: async (store: MemoryStore) => {
      await loadManifests(store, manifestsOf(dir));
    },
  };
}

/** Starts the embedded plugin on dir, logging into a recording logger. */
async function start(t: Test, dir: string, acceptNewCa = false) {
  const logger = recordingLogger();
  const options = pluginOptions(dir, logger);
  const plugin = await startEmbeddedPlugin({
    ...options,
    controllers: { retry: { baseDelayMs: 20 } },
    ...(acceptNewCa ? { acceptNewCa } : {}),
  });
  const { client, stop } = connectClient(t, options.endpoint, plugin);
  return { plugin, client, stop, records: logger.records };
}

/** The error and records of a start that must fail. */
async function refusedStart(t: Test, dir: string): Promise<{ err: Error; records: LogRecord[] }> {
  const logger = recordingLogger();
  const err = await rejection(startEmbeddedPlugin(pluginOptions(dir, logger)));
  t.type(err, EmbeddedCaLostError);
  return { err: err as Error, records: logger.records };
}

const messages = (records: LogRecord[], level: string) =>
  records.filter(([l]) => l === level).map(([, , msg]) => msg);

/** Waits until the store holds a Secret with a certificate at namespace/name, and returns it. */
function issued(store: MemoryStore, namespace: string, name: string): Promise<Secret> {
  return until(
    async () => {
      const secret = await store.get<Secret>(SecretKind, name, namespace).catch(() => undefined);
      return secret?.data?.['tls.crt'] ? secret : undefined;
    },
    { what: `Secret ${namespace}/${name} issued`, timeoutMs: CERTIFICATE_WAIT_MS },
  );
}

/** A namespaced copy of the bootstrap pattern: SelfSigned Issuer -> CA Certificate -> CA Issuer. */
function teamIssuers(namespace: string): object[] {
  return [
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name: 'team-selfsigned', namespace },
      spec: { selfSigned: {} },
    },
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: 'team-ca', namespace },
      spec: {
        isCA: true,
        commonName: 'team CA',
        secretName: 'team-ca',
        privateKey: { algorithm: 'ECDSA', size: 256 },
        issuerRef: { name: 'team-selfsigned', kind: 'Issuer' },
      },
    },
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name: 'team-ca', namespace },
      spec: { ca: { secretName: 'team-ca' } },
    },
  ];
}

/** A leaf Certificate in apps signed by the bootstrap CA ClusterIssuer. */
const leafCertificate = {
  apiVersion: 'cert-manager.io/v1',
  kind: 'Certificate',
  metadata: { name: 'app', namespace: 'apps' },
  spec: {
    secretName: 'app-tls',
    dnsNames: ['app.apps.svc'],
    issuerRef: { name: CA, kind: 'ClusterIssuer', group: 'cert-manager.io' },
  },
};

interface Fixture {
  dir: string;
  target: string;
  /** The pod's ca.crt after the first start. */
  podCa: string;
}

/**
 * A first start with bootstrap-ca.yaml and the extra manifests, waiting for the Secrets named
 * in waitFor (the CA's first), then publishing a volume with the given attributes when given;
 * a first start logs nothing at error level.
 */
async function firstStart(
  t: Test,
  options: {
    extra?: object[];
    /** Written as secret.json, so a test can drop it later. */
    secretManifest?: object;
    waitFor?: Array<[namespace: string, name: string]>;
    volume?: { namespace: string; attributes: Record<string, string> };
  } = {},
): Promise<Fixture> {
  const dir = await tempDir(t, 'cert-csi-issuer-ca-loss-');
  await mkdir(manifestsOf(dir));
  await copyFile(
    join(DEPLOY_DIR, 'bootstrap-ca.yaml'),
    join(manifestsOf(dir), 'bootstrap-ca.yaml'),
  );
  // One object per JSON file, as kubectl reads them.
  for (const [index, object] of (options.extra ?? []).entries()) {
    await writeFile(join(manifestsOf(dir), `extra-${index}.json`), JSON.stringify(object));
  }
  if (options.secretManifest) {
    await writeFile(join(manifestsOf(dir), 'secret.json'), JSON.stringify(options.secretManifest));
  }
  const first = await start(t, dir);
  for (const [namespace, name] of options.waitFor ?? [[NS, CA]]) {
    await issued(first.plugin.store, namespace, name);
  }
  const target = join(dir, 'pods', 'mount');
  let podCa = '';
  if (options.volume) {
    await first.client.nodeCall(
      'NodePublishVolume',
      inlineVolumeCall(VOLUME, target, {
        ...podInfo({ name: 'app-0', namespace: options.volume.namespace }),
        ...options.volume.attributes,
      }),
    );
    podCa = await readFile(join(target, 'ca.crt'), 'utf8');
  }
  await first.stop();
  t.same(messages(first.records, 'error'), [], 'a first start logs no error');
  return { dir, target, podCa };
}

const bootstrapVolume = {
  namespace: 'apps',
  attributes: {
    'csi.cert-manager.io/issuer-name': CA,
    'csi.cert-manager.io/issuer-kind': 'ClusterIssuer',
    'csi.cert-manager.io/common-name': 'app-0',
  },
};

/** Names of the CertificateRequests in the state dir (none is made by a refused start). */
async function requestFiles(dir: string): Promise<string[]> {
  const root = join(dir, 'state', 'cert-manager.io', 'certificaterequests');
  const entries = await readdir(root, { recursive: true }).catch(() => []);
  return entries.map(String).sort();
}

t.test(
  'bootstrap CA ClusterIssuer: its Secret lost with a volume it signed refuses to start; --accept-new-ca lets its Certificate issue a new one',
  async (t) => {
    const { dir, target, podCa } = await firstStart(t, { volume: bootstrapVolume });
    t.equal(
      podCa,
      secretText(JSON.parse(await readFile(secretPath(dir, NS, CA), 'utf8')), 'ca.crt'),
    );
    const leaf = await readFile(join(target, 'tls.crt'), 'utf8');
    const requests = await requestFiles(dir);
    await rm(secretPath(dir, NS, CA));

    // The real command: refused, exit 1, the reason on stderr and as an error log line.
    const cli = await runCli([
      'node',
      ...nodeArgs(
        dir,
        ['--cluster-resource-namespace', NS, '--manifests', manifestsOf(dir)],
        'issuer-ca-loss',
      ),
    ]);
    t.equal(cli.code, 1, 'the node does not start');
    const expected =
      `ClusterIssuer "${CA}": the CA Secret ${NS}/${CA} cannot be used: it is missing, but 1 volume(s) on the data root hold certificates it signed (e.g. ${VOLUME}). ` +
      'Refusing to start with a new CA that existing pods do not trust. ' +
      `Restore the state dir from a backup (the Secret is core/secrets/${NS}/${CA}.json in it), ` +
      `or start once with --accept-new-ca to let Certificate ${NS}/${CA} issue a new CA into it`;
    t.match(cli.stderr, `cert-csi: ${expected}`);
    const logged = cli.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const refusal = logged.find((line) => line.msg === REFUSED);
    t.match(refusal, {
      secret: `${NS}/${CA}`,
      issuers: `ClusterIssuer "${CA}"`,
      volumes: 1,
      secrets: 0,
    });
    t.equal(refusal?.level, 'error', 'at error level');
    t.notOk(logged.some((line) => line.msg === 'cert-csi node plugin started'));

    // In process, the same: nothing issued, nothing in the Secret's place, the pod's files as they were.
    const { err, records } = await refusedStart(t, dir);
    t.match(err.message, expected);
    t.same(messages(records, 'error'), [REFUSED]);
    await t.rejects(readFile(secretPath(dir, NS, CA)), { code: 'ENOENT' }, 'no new CA written');
    t.same(await requestFiles(dir), requests, 'no CertificateRequest made');
    t.equal(await readFile(join(target, 'ca.crt'), 'utf8'), podCa, 'the pod keeps its CA');
    t.equal(await readFile(join(target, 'tls.crt'), 'utf8'), leaf, 'and its certificate');

    // The operator's word: the Certificate issues a new CA and the volume moves to it.
    const accepted = await start(t, dir, true);
    const [said] = accepted.records.filter(([, , msg]) => msg?.startsWith('accepted a new CA'));
    t.equal(said?.[0], 'error', 'the acceptance is said at error level');
    t.match(said?.[1], {
      secret: `${NS}/${CA}`,
      issuers: `ClusterIssuer "${CA}"`,
      certificate: `${NS}/${CA}`,
      volumes: 1,
      secrets: 0,
    });
    const newCa = secretText(await issued(accepted.plugin.store, NS, CA), 'ca.crt');
    t.not(newCa, podCa, 'a new CA');
    await until(() => messages(accepted.records, 'info').includes('certificate renewed'), {
      what: 'the volume renewed with the new CA',
      timeoutMs: CERTIFICATE_WAIT_MS,
    });
    t.equal(await readFile(join(target, 'ca.crt'), 'utf8'), newCa, 'the volume moved to it');
    const renewed = await readFile(join(target, 'tls.crt'), 'utf8');
    t.match(await opensslVerify(newCa, renewed), /OK/);
    await t.rejects(opensslVerify(podCa, renewed), 'the old CA does not verify the new leaf');

    // Accepted once: the next start keeps the new CA, quietly.
    await accepted.stop();
    const next = await start(t, dir);
    t.same(messages(next.records, 'error'), [], 'a later start logs no error');
    t.equal(secretText(await issued(next.plugin.store, NS, CA), 'ca.crt'), newCa, 'the same CA');
  },
);

t.test('a namespaced CA Issuer whose Secret is lost with a volume it signed refuses', async (t) => {
  const { dir, target, podCa } = await firstStart(t, {
    extra: teamIssuers('team'),
    waitFor: [['team', 'team-ca']],
    volume: {
      namespace: 'team',
      attributes: {
        'csi.cert-manager.io/issuer-name': 'team-ca',
        'csi.cert-manager.io/issuer-kind': 'Issuer',
      },
    },
  });
  await rm(secretPath(dir, 'team', 'team-ca'));
  const { err } = await refusedStart(t, dir);
  t.match(
    err.message,
    `Issuer "team/team-ca": the CA Secret team/team-ca cannot be used: it is missing, but 1 volume(s) on the data root hold certificates it signed (e.g. ${VOLUME})`,
  );
  t.match(err.message, '(the Secret is core/secrets/team/team-ca.json in it)');
  t.match(err.message, '--accept-new-ca to let Certificate team/team-ca issue a new CA into it');
  t.notMatch(err.message, CA, 'the bootstrap CA, whose Secret is there, is not named');
  await t.rejects(readFile(secretPath(dir, 'team', 'team-ca')), { code: 'ENOENT' });
  t.equal(await readFile(join(target, 'ca.crt'), 'utf8'), podCa);
});

t.test('an unusable CA Secret refuses to start and is left as it is', async (t) => {
  const { dir } = await firstStart(t, { volume: bootstrapVolume });
  const stored = JSON.parse(await readFile(secretPath(dir, NS, CA), 'utf8'));
  stored.data['tls.key'] = Buffer.from('-----BEGIN PRIVATE KEY-----\nAAAA\n').toString('base64');
  const corrupt = `${JSON.stringify(stored)}\n`;
  await writeFile(secretPath(dir, NS, CA), corrupt);
  const { err } = await refusedStart(t, dir);
  t.match(err.message, `ClusterIssuer "${CA}": the CA Secret ${NS}/${CA} cannot be used: `);
  t.match(
    err.message,
    `; 1 volume(s) on the data root hold certificates it signed (e.g. ${VOLUME})`,
  );
  t.equal(await readFile(secretPath(dir, NS, CA), 'utf8'), corrupt, 'not re-issued');
});

/** A Secret carrying the issuer annotations the issuing controller writes, given here by hand. */
function annotatedSecret(name: string, annotations: Record<string, string>): object {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: 'apps', annotations },
    type: 'kubernetes.io/tls',
    stringData: { 'tls.crt': 'imported', 'tls.key': 'imported' },
  };
}

t.test('a CA whose only dependants are Certificate Secrets it signed refuses', async (t) => {
  const { dir } = await firstStart(t, {
    extra: [leafCertificate],
    waitFor: [
      [NS, CA],
      ['apps', 'app-tls'],
    ],
  });
  const leaf = await readFile(secretPath(dir, 'apps', 'app-tls'), 'utf8');
  // Secrets that CA signed elsewhere, copied in with their annotations. No group annotation:
  // cert-manager.io. No kind: an Issuer of that name in apps, which is another issuer.
  const copied = [
    annotatedSecret('imported-tls', {
      'cert-manager.io/issuer-name': CA,
      'cert-manager.io/issuer-kind': 'ClusterIssuer',
    }),
    annotatedSecret('other-tls', { 'cert-manager.io/issuer-name': CA }),
  ];
  await writeFile(
    join(manifestsOf(dir), 'copied.yaml'),
    copied.map((o) => JSON.stringify(o)).join('\n---\n'),
  );
  await rm(secretPath(dir, NS, CA));
  const { err } = await refusedStart(t, dir);
  t.match(
    err.message,
    `the CA Secret ${NS}/${CA} cannot be used: it is missing, but 2 Certificate Secret(s) in the store hold certificates it signed (e.g. apps/app-tls)`,
  );
  await t.rejects(readFile(secretPath(dir, NS, CA)), { code: 'ENOENT' });
  t.equal(await readFile(secretPath(dir, 'apps', 'app-tls'), 'utf8'), leaf, 'the leaf is kept');
});

t.test('a CA Secret lost with nothing it signed is a first start again, quiet', async (t) => {
  const { dir } = await firstStart(t, { volume: bootstrapVolume });
  // As a first publish that failed before its certificate leaves it: it holds nothing signed.
  const metadataFile = join(dir, 'volumes', VOLUME, 'metadata.json');
  const { notAfter, nextIssuanceTime, ...neverIssued } = JSON.parse(
    await readFile(metadataFile, 'utf8'),
  );
  t.ok(notAfter && nextIssuanceTime, 'the issued volume recorded its certificate');
  await writeFile(metadataFile, JSON.stringify(neverIssued));
  const before = secretText(JSON.parse(await readFile(secretPath(dir, NS, CA), 'utf8')), 'ca.crt');
  await rm(secretPath(dir, NS, CA));
  const again = await start(t, dir);
  const reissued = secretText(await issued(again.plugin.store, NS, CA), 'ca.crt');
  t.not(reissued, before, 'its Certificate issued a new CA');
  t.same(messages(again.records, 'error'), [], 'nothing at error level');
  t.notOk(
    again.records.some(([, , msg]) => msg === REFUSED || msg?.startsWith('accepted a new CA')),
  );
});

t.test(
  'two lost CAs in one refusal: a CA Secret nothing here writes, and an unusable embedded CA',
  async (t) => {
    const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
    const caPem = await createSelfSignedCa({ key, commonName: 'ops CA', durationMs: 86_400_000 });
    const { dir } = await firstStart(t, {
      extra: [
        {
          apiVersion: 'cert-manager.io/v1',
          kind: 'ClusterIssuer',
          metadata: { name: 'ops-ca' },
          spec: { ca: { secretName: 'ops-ca' } },
        },
        {
          apiVersion: 'cert-manager.io/v1',
          kind: 'Certificate',
          metadata: { name: 'ops', namespace: 'apps' },
          spec: {
            secretName: 'ops-tls',
            dnsNames: ['ops.apps.svc'],
            issuerRef: { name: 'ops-ca', kind: 'ClusterIssuer' },
          },
        },
      ],
      secretManifest: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'ops-ca', namespace: NS },
        type: 'kubernetes.io/tls',
        stringData: {
          'tls.crt': caPem,
          'tls.key': encodePrivateKey(key, 'PKCS8'),
          'ca.crt': caPem,
        },
      },
      waitFor: [['apps', 'ops-tls']],
    });
    // The operator dropped the Secret's manifest, and its state file is lost.
    await rm(join(manifestsOf(dir), 'secret.json'));
    await rm(secretPath(dir, NS, 'ops-ca'));
    const embedded = secretPath(dir, NS, 'embedded-ca');
    const stored = JSON.parse(await readFile(embedded, 'utf8'));
    stored.data['tls.crt'] = Buffer.from('not a certificate').toString('base64');
    await writeFile(embedded, JSON.stringify(stored));

    const { err, records } = await refusedStart(t, dir);
    const lines = err.message.split('\n');
    t.equal(lines.length, 2, 'one line per lost CA');
    const ops = lines.find((line) => line.includes('"ops-ca"'));
    const builtIn = lines.find((line) => line.includes('"embedded-ca"'));
    t.match(
      ops,
      `ClusterIssuer "ops-ca": the CA Secret ${NS}/ops-ca cannot be used: it is missing, but 1 Certificate Secret(s) in the store hold certificates it signed (e.g. apps/ops-tls)`,
    );
    t.match(
      ops,
      '--accept-new-ca to accept a new CA once you load one into it (e.g. with --manifests)',
    );
    t.match(
      builtIn,
      `ClusterIssuer "embedded-ca": the embedded CA Secret ${NS}/embedded-ca cannot be used: `,
    );
    t.same(messages(records, 'error'), [REFUSED, REFUSED]);

    const accepted = await start(t, dir, true);
    const errors = accepted.records.filter(([level]) => level === 'error');
    t.equal(errors.length, 2, 'one error line per accepted CA');
    const acceptedOps = errors.find(([, , msg]) => msg?.startsWith('accepted a new CA'));
    t.match(acceptedOps?.[1], { secret: `${NS}/ops-ca`, volumes: 0, secrets: 1 });
    t.notOk('certificate' in (acceptedOps?.[1] ?? {}), 'no Certificate writes it');
    const replacedEmbedded = errors.find(([, , msg]) =>
      msg?.startsWith('replaced a lost embedded CA'),
    );
    t.match(replacedEmbedded?.[1], { secret: `${NS}/embedded-ca`, volumes: 0 });
    const replaced = JSON.parse(await readFile(embedded, 'utf8'));
    t.not(replaced.data['tls.crt'], stored.data['tls.crt'], 'the embedded CA replaced in place');
    await t.rejects(
      readFile(secretPath(dir, NS, 'ops-ca')),
      { code: 'ENOENT' },
      'ops-ca waits for its Secret',
    );
  },
);
