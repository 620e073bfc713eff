import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import t from 'tap';
import type { MemoryStore } from '../../src/store/memory-store.js';
import { readContinuously } from '../support/ca-file-reader.js';
import { putConfigMap } from '../support/config-map-fixtures.js';
import { until } from '../support/eventually.js';
import { rejectsWith } from '../support/grpc-assert.js';
import { makeCA } from '../support/issuer-fixtures.js';
import { embeddedCA, startPlugin } from '../support/plugin-harness.js';
import { tempDir } from '../support/temp-dir.js';

const NAMESPACE = 'sandbox';
const attributes = embeddedCA({
  'csi.cert-manager.io/key-algorithm': 'ECDSA',
  'csi.cert-manager.io/trust-bundle': 'configmap:roots/ca.crt',
});
// Generous: only a broken watch reaches it.
const FOLLOW_TIMEOUT_MS = 20_000;
const [A, B, C] = (await Promise.all([makeCA(), makeCA(), makeCA()])).map((ca) =>
  new X509Certificate(ca.certificatePem).toString(),
) as [string, string, string];

const setRoots = (store: MemoryStore, data: Record<string, string>) =>
  putConfigMap(store, NAMESPACE, 'roots', data);

const follows = (targets: string[], expected: string, what: string) =>
  until(
    async () => {
      const now = await Promise.all(
        targets.map((target) => readFile(join(target, 'ca.crt'), 'utf8').catch(() => '')),
      );
      return now.every((content) => content === expected);
    },
    { what, timeoutMs: FOLLOW_TIMEOUT_MS, intervalMs: 2 },
  );

t.test(
  'embedded mode: volumes follow a ConfigMap, renewals keep the bundle, a restart watches again',
  async (t) => {
    const dir = await tempDir(t, 'cert-csi-trust-');
    const stateDir = join(dir, 'state');
    const first = await startPlugin(t, { dir, stateDir });
    await setRoots(first.store, { 'ca.crt': A });
    const targets = [
      (await first.publish('vol-1', attributes)).target,
      (await first.publish('vol-2', attributes)).target,
    ];
    await follows(targets, A, 'the CA files to be the bundle');
    const requests = (await first.requests()).map((r) => r.metadata.name).sort();
    const keys = await Promise.all(
      targets.map((target) => readFile(join(target, 'tls.key'), 'utf8')),
    );

    const reader = readContinuously(targets.map((target) => join(target, 'ca.crt')));
    const started = performance.now();
    await setRoots(first.store, { 'ca.crt': A + B });
    await follows(targets, A + B, 'both volumes to follow the change');
    const latency = performance.now() - started;
    const seen = await reader.stop();
    t.comment(`embedded: ConfigMap update to both volumes' CA files in ${latency.toFixed(1)} ms`);
    t.same(
      [...seen.contents].filter((content) => content !== A && content !== A + B),
      [],
      `each of ${seen.reads} reads was a whole version`,
    );
    t.same(
      (await first.requests()).map((r) => r.metadata.name).sort(),
      requests,
      'no new CertificateRequest',
    );
    for (const [i, target] of targets.entries()) {
      t.equal(await readFile(join(target, 'tls.key'), 'utf8'), keys[i], 'key unchanged');
    }

    // A renewal while the source is unusable: a new certificate, the last good bundle kept.
    await setRoots(first.store, { 'ca.crt': 'not PEM' });
    const oldCert = await readFile(join(targets[0] as string, 'tls.crt'), 'utf8');
    const renewed = await first.manager.renewNow({ volumeId: 'vol-1' });
    t.equal(renewed.renewed.length, 1, 'renewed');
    t.not(
      await readFile(join(targets[0] as string, 'tls.crt'), 'utf8'),
      oldCert,
      'new certificate',
    );
    t.equal(await readFile(join(targets[0] as string, 'ca.crt'), 'utf8'), A + B, 'bundle kept');
    await first.stop();

    // After a restart (the source unusable at start, from above): the rediscovered volumes watch
    // their source again and follow each change without being published again.
    const second = await startPlugin(t, { dir, stateDir });
    await setRoots(second.store, { 'ca.crt': B });
    await follows(targets, B, 'the rediscovered volumes to follow');
    await setRoots(second.store, { 'ca.crt': B + C });
    await follows(targets, B + C, 'the rediscovered volumes to follow again');
  },
);

t.test(
  'a source that never comes: the publish ends at its deadline saying so, nothing requested',
  async (t) => {
    const plugin = await startPlugin(t, { heldDeadlines: true });
    const publishing = plugin.publish('vol-missing', {
      ...attributes,
      'csi.cert-manager.io/trust-bundle': 'configmap:absent/ca.crt',
    });
    // Once the source is known missing, the publish's deadline (the only one held) is expired.
    const source = {
      kind: 'configmap',
      namespace: NAMESPACE,
      name: 'absent',
      key: 'ca.crt',
    } as const;
    await until(
      () => {
        const resolved = plugin.manager.trustBundleSources.resolve(source);
        return !resolved.ok && resolved.problem === 'ConfigMap "sandbox/absent" not found';
      },
      { what: 'the source to be listed and found missing' },
    );
    await until(() => plugin.deadlines.expire() > 0, { what: 'the publish deadline' });
    await rejectsWith(
      t,
      publishing,
      status.DEADLINE_EXCEEDED,
      /trust bundle not available: configmap:sandbox\/absent\/ca\.crt: ConfigMap "sandbox\/absent" not found/,
    );
    t.same(await plugin.requests(), [], 'no CertificateRequest was created');
  },
);

t.test(
  'a renewal racing bundle changes: the files end with the newest certificate and the newest bundle',
  async (t) => {
    const plugin = await startPlugin(t);
    await setRoots(plugin.store, { 'ca.crt': A });
    const { target } = await plugin.publish('vol-race', attributes);
    const versions = [A + B, B, C];
    for (const version of versions) {
      const before = await readFile(join(target, 'tls.crt'), 'utf8');
      const [renewed] = await Promise.all([
        plugin.manager.renewNow({ volumeId: 'vol-race' }),
        setRoots(plugin.store, { 'ca.crt': version }),
      ]);
      t.equal(renewed.renewed.length, 1, 'renewed');
      await follows([target], version, 'the newest bundle');
      const cert = new X509Certificate(await readFile(join(target, 'tls.crt')));
      t.not(cert.toString(), new X509Certificate(before).toString(), 'the renewed certificate');
      t.ok(
        cert.checkPrivateKey(
          (await import('node:crypto')).createPrivateKey(await readFile(join(target, 'tls.key'))),
        ),
        'key and certificate match',
      );
    }
  },
);

t.test('a malformed source is refused at publish, before anything is written', async (t) => {
  const plugin = await startPlugin(t);
  await rejectsWith(
    t,
    plugin.publish('vol-bad', {
      ...attributes,
      'csi.cert-manager.io/trust-bundle': 'configmap:roots',
    }),
    status.INVALID_ARGUMENT,
    /csi\.cert-manager\.io\/trust-bundle: Invalid value: "configmap:roots": must be configmap:<name>\/<key>/,
  );
  t.notOk(await plugin.dataRoot.hasVolume('vol-bad'), 'nothing written');
});
