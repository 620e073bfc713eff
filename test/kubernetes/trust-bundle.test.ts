import { X509Certificate } from 'node:crypto';
import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { ClusterTrustBundleKind } from '../../src/api/cluster-trust-bundle.js';
import { type ConfigMap, ConfigMapKind } from '../../src/api/config-map.js';
import { ClusterIssuerKind } from '../../src/api/issuer.js';
import { silentLogger } from '../../src/api/logger.js';
import { type Secret, SecretKind } from '../../src/api/secret.js';
import { startKubernetesPlugin } from '../../src/cli/node/kubernetes-plugin.js';
import { POD_CERTIFICATE_NAMESPACES_ANNOTATION } from '../../src/issuer/podcertificaterequests/pod-certificate-policy.js';
import { trustBundleNameOf } from '../../src/issuer/podcertificaterequests/trust-bundle-publisher.js';
import { splitPemCertificates } from '../../src/pki/chain.js';
import { createMounter } from '../../src/volume/create-mounter.js';
import { volumeManagerSettings } from '../../src/volume-manager/settings.js';
import { clusterIssuer, tlsSecret, withAnnotations, withSpec } from '../support/builders/index.js';
import { readContinuously } from '../support/ca-file-reader.js';
import {
  caIssuerAttributes,
  NODE_TOKEN,
  POD_NAMESPACE,
  startCluster,
  startClusterController,
  startClusterPlugin,
} from '../support/cluster-harness.js';
import { until } from '../support/eventually.js';
import { makeCA, run } from '../support/issuer-fixtures.js';

const TRUST_BUNDLE = 'csi.cert-manager.io/trust-bundle';
const ECDSA = { 'csi.cert-manager.io/key-algorithm': 'ECDSA' };
const SIGNER = 'clusterissuers.cert-manager.io/cluster-ca';
// Generous: only a broken watch reaches it; the latency is measured and reported below.
const FOLLOW_TIMEOUT_MS = 20_000;

/** A root's PEM as a CA file holds it (one canonical block). */
const canonical = (pem: string) => new X509Certificate(pem).toString();
/** The certificates of a CA file, as a sorted list of fingerprints. */
const fingerprints = (pem: string) =>
  splitPemCertificates(pem)
    .map((c) => c.fingerprint256)
    .sort();

const cluster = await startCluster(t);
await cluster.seedIssuer();
const server = cluster.server;
const roots = await Promise.all([makeCA(), makeCA(), makeCA(), makeCA()]);
const [A, B, C, D] = roots.map((r) => canonical(r.certificatePem)) as [
  string,
  string,
  string,
  string,
];
startClusterController(t, cluster);
const node = await startClusterPlugin(t, cluster, { nodeId: 'node-1' });

const requestCreates = () =>
  server.requests.filter(
    (r) => r.verb === 'create' && r.resource === 'certificaterequests' && r.status === 201,
  ).length;

async function setConfigMap(data: Record<string, string>): Promise<void> {
  const existing = await server.store
    .get<ConfigMap>(ConfigMapKind, 'roots', POD_NAMESPACE)
    .catch(() => undefined);
  if (!existing) {
    await server.store.create<ConfigMap>(ConfigMapKind, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'roots', namespace: POD_NAMESPACE },
      data,
    });
    return;
  }
  await server.store.update<ConfigMap>(ConfigMapKind, { ...existing, data });
}

t.test(
  'a ConfigMap source: every volume follows each change at once, nothing re-issued, no torn read',
  async (t) => {
    await setConfigMap({ 'ca.crt': A });
    const attributes = {
      ...caIssuerAttributes,
      ...ECDSA,
      [TRUST_BUNDLE]: 'configmap:roots/ca.crt',
    };
    const targets = [
      (await node.publish('vol-1', attributes)).target,
      (await node.publish('vol-2', attributes)).target,
    ];
    for (const target of targets) {
      t.equal(await readFile(join(target, 'ca.crt'), 'utf8'), A, 'the CA file is the bundle');
    }
    const before = await Promise.all(
      targets.map(async (target) => ({
        key: await readFile(join(target, 'tls.key'), 'utf8'),
        cert: await readFile(join(target, 'tls.crt'), 'utf8'),
      })),
    );
    const creates = requestCreates();
    t.equal(creates, 2, 'one CertificateRequest per volume');

    const reader = readContinuously(targets.map((target) => join(target, 'ca.crt')));
    const latencies: number[] = [];
    const follow = async (expected: string) => {
      const started = performance.now();
      await until(
        async () => {
          const now = await Promise.all(
            targets.map((target) => readFile(join(target, 'ca.crt'), 'utf8').catch(() => '')),
          );
          return now.every((content) => content === expected);
        },
        {
          what: 'both CA files to follow the ConfigMap',
          timeoutMs: FOLLOW_TIMEOUT_MS,
          intervalMs: 2,
        },
      );
      latencies.push(performance.now() - started);
    };
    // Old + new roots before the leaves move, then the new one alone, then a comment and a
    // duplicate that change nothing a TLS library reads but are dropped on the way.
    for (const [data, expected] of [
      [A + B, A + B],
      [B, B],
      [`# corporate roots\n${B}${C}${B}`, B + C],
    ] as const) {
      await setConfigMap({ 'ca.crt': data });
      await follow(expected);
    }
    // An unusable source keeps the CA file: no certificate at all, a key among the roots, the
    // key gone. The next good version is what the volumes get: none of these was written.
    await setConfigMap({ 'ca.crt': 'not a certificate' });
    await setConfigMap({ 'ca.crt': C + roots[0]?.keyPem });
    await setConfigMap({ other: A });
    await setConfigMap({ 'ca.crt': D });
    await follow(D);
    const seen = await reader.stop();

    const written = new Set([A, A + B, B, B + C, D]);
    t.ok(seen.reads > 0, `the reader read ${seen.reads} times`);
    t.same(
      [...seen.contents].filter((content) => !written.has(content)),
      [],
      'every read was one complete version written, never a partial or an unusable one',
    );
    for (const content of seen.contents) {
      t.ok(splitPemCertificates(content).length > 0, 'every read parses as PEM certificates');
    }
    t.comment(
      `trust bundle latency (ConfigMap update to both volumes' files, ms): ${latencies
        .map((ms) => ms.toFixed(1))
        .join(', ')}; reads ${seen.reads}, opens that found no file ${seen.missing}`,
    );
    t.equal(requestCreates(), creates, 'no CertificateRequest was created by the changes');
    for (const [i, target] of targets.entries()) {
      t.equal(await readFile(join(target, 'tls.key'), 'utf8'), before[i]?.key, 'key unchanged');
      t.equal(await readFile(join(target, 'tls.crt'), 'utf8'), before[i]?.cert, 'cert unchanged');
    }

    // Unpublished: never written again, whatever changes.
    await node.unpublish('vol-2', targets[1] as string);
    await setConfigMap({ 'ca.crt': A });
    await until(async () => (await readFile(join(targets[0] as string, 'ca.crt'), 'utf8')) === A, {
      what: 'vol-1 to follow',
      timeoutMs: FOLLOW_TIMEOUT_MS,
    });
    t.notOk(await node.plugin.dataRoot.hasVolume('vol-2'), 'the unpublished volume stays gone');
    await t.rejects(access(join(targets[1] as string, 'ca.crt')), 'nothing written to its target');
  },
);

t.test(
  'a ClusterTrustBundle signer source follows a CA rollover: old + new roots, then the new one',
  async (t) => {
    const [oldCa, newCa] = [roots[0], roots[1]] as const;
    await server.store.create(
      SecretKind,
      tlsSecret('cert-csi', 'cluster-ca', {
        'tls.crt': oldCa.certificatePem,
        'tls.key': oldCa.keyPem,
      }),
    );
    const clusterCa = clusterIssuer(
      'cluster-ca',
      withSpec({ ca: { secretName: 'cluster-ca' } }),
      withAnnotations({ [POD_CERTIFICATE_NAMESPACES_ANNOTATION]: '' }),
    );
    await server.store.create(ClusterIssuerKind, clusterCa);
    const { target } = await node.publish('vol-3', {
      ...caIssuerAttributes,
      ...ECDSA,
      'csi.cert-manager.io/issuer-name': 'cluster-ca',
      'csi.cert-manager.io/issuer-kind': 'ClusterIssuer',
      [TRUST_BUNDLE]: `clustertrustbundle-signer:${SIGNER}`,
    });
    const caFile = join(target, 'ca.crt');
    const caFileHolds = (pems: string[]) =>
      until(
        async () =>
          JSON.stringify(fingerprints(await readFile(caFile, 'utf8'))) ===
          JSON.stringify(fingerprints(pems.join(''))),
        { what: 'the CA file to hold the signer bundle', timeoutMs: FOLLOW_TIMEOUT_MS },
      );
    await caFileHolds([A]);
    const verify = () => run('openssl', ['verify', '-CAfile', caFile, join(target, 'tls.crt')]);
    t.match((await verify()).stdout, /OK/, 'the leaf verifies against the bundle');
    const creates = requestCreates();

    // The rollover: the controller publishes new + old in the signer's bundle first.
    const secret = await server.store.get<Secret>(SecretKind, 'cluster-ca', 'cert-csi');
    await server.store.update(SecretKind, {
      ...secret,
      data: tlsSecret('cert-csi', 'cluster-ca', {
        'tls.crt': newCa.certificatePem,
        'tls.key': newCa.keyPem,
      }).data,
    });
    await caFileHolds([A, B]);
    t.equal(requestCreates(), creates, 'the bundle moved without a new CertificateRequest');
    t.match((await verify()).stdout, /OK/, 'the old leaf still verifies during the rollover');

    // The leaf moves to the new CA; the CA file is still the bundle.
    const renewed = await node.plugin.manager.renewNow({ volumeId: 'vol-3' });
    t.equal(renewed.renewed.length, 1, 'renewed');
    await caFileHolds([A, B]);
    t.match((await verify()).stdout, /OK/, 'the new leaf verifies against the bundle');
    t.ok(
      new X509Certificate(await readFile(join(target, 'tls.crt'))).verify(
        new X509Certificate(B).publicKey,
      ),
      'the renewed leaf is signed by the new CA',
    );

    // Old roots dropped: the bundle is published again with the new root alone.
    await server.store.delete(ClusterTrustBundleKind, trustBundleNameOf(SIGNER));
    await caFileHolds([B]);
    t.match((await verify()).stdout, /OK/, 'the leaf verifies against the new root alone');
  },
);

t.test('a change made while the plugin is down reaches the volumes when it starts', async (t) => {
  const { target } = await node.publish('vol-4', {
    ...caIssuerAttributes,
    ...ECDSA,
    [TRUST_BUNDLE]: 'configmap:roots/ca.crt',
  });
  const current = await readFile(join(target, 'ca.crt'), 'utf8');
  await node.stop();
  const next = current === C ? D : C;
  await setConfigMap({ 'ca.crt': next });
  // The same data root, a new process: the volumes on disk are taken back and watch again.
  const restarted = await startKubernetesPlugin({
    endpoint: { kind: 'unix', path: join(node.dir, 'restarted.sock') },
    settings: volumeManagerSettings({ nodeId: 'node-1' }),
    driverName: 'csi.cert-manager.io',
    version: 'test',
    dataRoot: join(node.dir, 'volumes'),
    mounter: createMounter({ mode: 'direct' }),
    logger: silentLogger,
    kubeConfig: cluster.kubeConfig(NODE_TOKEN),
    qps: 1000,
    burst: 1000,
    useTokenRequest: false,
  });
  t.teardown(() => restarted.stop());
  await until(async () => (await readFile(join(target, 'ca.crt'), 'utf8')) === next, {
    what: 'the CA file to catch up after the restart',
    timeoutMs: FOLLOW_TIMEOUT_MS,
  });
  t.pass('the CA file holds the bundle changed while the plugin was down');
});
