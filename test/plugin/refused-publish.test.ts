// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${POD_IP}` is the variable syntax under test
// A publish refused through the real socket is not remembered: `renew --all` (renewNow) finds
// no volume to renew, no trust bundle stays watched, no timer armed, nothing on disk. A
// refusal aimed at a volume published before leaves that volume served and renewable.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import t, { type Test } from 'tap';
import type { ApprovalDecision } from '../../src/issuer/certificaterequests/approval-policy.js';
import { putConfigMap } from '../support/config-map-fixtures.js';
import { until } from '../support/eventually.js';
import { rejectsWith } from '../support/grpc-assert.js';
import { makeCA } from '../support/issuer-fixtures.js';
import { embeddedCA, type PluginHarness, startPlugin } from '../support/plugin-harness.js';

const TRUST_BUNDLE = { 'csi.cert-manager.io/trust-bundle': 'configmap:team-ca/ca.crt' };
const TOKENS = { 'csi.storage.k8s.io/serviceAccount.tokens': '{"":{"token":"t"}}' };
const attr = (name: string) => `csi.cert-manager.io/${name}`;

/** Asserts the plugin holds nothing: the manual renewal of every volume finds none, and more. */
async function assertForgotten(t: Test, p: PluginHarness, what: string): Promise<void> {
  t.same(
    await p.manager.renewNow({ all: true }),
    { renewed: [], failed: [] },
    `${what}: renew --all has no volume to renew`,
  );
  t.equal(p.manager.trustBundleSources.watchCount, 0, `${what}: no trust bundle watched`);
  t.equal(p.manager.scheduledRenewals, 0, `${what}: no renewal timer`);
  t.same(p.manager.unsavedFailures(), [], `${what}: no failure held in memory`);
  t.same(await p.dataRoot.listVolumeIds(), [], `${what}: no volume dir`);
}

t.test('publishes refused at their checks leave nothing behind', async (t) => {
  const p = await startPlugin(t);
  const occupied = join(p.dir, 'pods', 'occupied', 'mount');
  await mkdir(occupied, { recursive: true });
  await writeFile(join(occupied, 'app.conf'), 'mine');
  const refusals: Array<[string, () => Promise<unknown>, status, RegExp]> = [
    [
      'a pod IP the pod does not have (no --pod-ip)',
      () =>
        p.publish(
          'csi-no-ip',
          embeddedCA({ ...TRUST_BUNDLE, ...TOKENS, [attr('ip-sans')]: '${POD_IP}' }),
        ),
      status.FAILED_PRECONDITION,
      /^the pod is not ready for issuance: pod has no IP address yet/,
    ],
    [
      // A zoned address passes the worst cases checked at publish but no SAN can hold it.
      'attributes invalid only with the pod IPs (a zoned IPv6 address in ip-sans)',
      () =>
        p.publish(
          'csi-zoned',
          embeddedCA({
            ...TRUST_BUNDLE,
            ...TOKENS,
            [attr('ip-sans')]: '${POD_IPS}',
            'csi.storage.k8s.io/pod.ips': '10.0.0.1,fe80::1%eth0',
          }),
        ),
      status.FAILED_PRECONDITION,
      /^the volume attributes are invalid with the pod's IPs 10\.0\.0\.1,fe80::1%eth0: .*ip-sans/,
    ],
    [
      'a target holding files of its own',
      () =>
        p.publish('csi-occupied', embeddedCA({ ...TRUST_BUNDLE, ...TOKENS }), { target: occupied }),
      status.FAILED_PRECONDITION,
      /is a non-empty directory this volume did not create/,
    ],
  ];
  for (const [name, refuse, code, message] of refusals) {
    await rejectsWith(t, refuse(), code, message);
    await assertForgotten(t, p, name);
    t.same(await p.requests(), [], `${name}: no CertificateRequest`);
  }
  t.equal(
    await readFile(join(occupied, 'app.conf'), 'utf8'),
    'mine',
    'the files at the target stay',
  );
});

t.test(
  'a publish that conflicts with a first publish under way leaves nothing either',
  async (t) => {
    let decide: (decision: ApprovalDecision) => void = () => {};
    const p = await startPlugin(t, {
      controllers: {
        config: { approval: () => new Promise<ApprovalDecision>((resolve) => (decide = resolve)) },
      },
    });
    // A first issuance waits for its trust bundle: there is one.
    await putConfigMap(p.store, 'sandbox', 'team-ca', {
      'ca.crt': (await makeCA()).certificatePem,
    });
    const first = p.publish('csi-new', embeddedCA({ ...TRUST_BUNDLE, ...TOKENS }));
    first.catch(() => {});
    await until(async () => (await p.requests()).length > 0, { what: 'the first request' });
    await rejectsWith(
      t,
      p.publish('csi-new', embeddedCA({ ...TRUST_BUNDLE, ...TOKENS, [attr('duration')]: '2h' })),
      status.ALREADY_EXISTS,
      /csi\.cert-manager\.io\/duration: published \(unset\), asked for "2h"/,
    );
    t.equal(
      p.manager.trustBundleSources.watchCount,
      1,
      'the first publish follows its trust bundle',
    );
    decide({ decision: 'deny', reason: 'policy', message: 'not this one' });
    await rejectsWith(t, first, status.PERMISSION_DENIED, /not this one/);
    await assertForgotten(t, p, 'after the denied first publish');
  },
);

t.test('refusals aimed at a published volume leave it served and renewable', async (t) => {
  const p = await startPlugin(t);
  const { target } = await p.publish('csi-up', embeddedCA(TOKENS));
  const certificate = await readFile(join(target, 'tls.crt'), 'utf8');
  const metadata = await readFile(p.dataRoot.metadataPath('csi-up'), 'utf8');
  const refusals: Array<[string, () => Promise<unknown>]> = [
    [
      'another attribute',
      () => p.publish('csi-up', embeddedCA({ ...TOKENS, [attr('common-name')]: 'x' })),
    ],
    [
      'another target',
      () => p.publish('csi-up', embeddedCA(TOKENS), { target: join(p.dir, 'elsewhere') }),
    ],
    ['another fsGroup', () => p.publish('csi-up', embeddedCA(TOKENS), { fsGroup: '3000' })],
  ];
  for (const [name, refuse] of refusals) {
    await rejectsWith(t, refuse(), status.ALREADY_EXISTS, /already published with other settings/);
    t.equal(await readFile(join(target, 'tls.crt'), 'utf8'), certificate, `${name}: still served`);
    t.equal(
      await readFile(p.dataRoot.metadataPath('csi-up'), 'utf8'),
      metadata,
      `${name}: metadata.json unchanged`,
    );
    t.equal(p.manager.scheduledRenewals, 1, `${name}: its renewal timer stays`);
  }
  const renewed = await p.manager.renewNow({ all: true });
  t.same(
    [renewed.renewed.map((r) => r.volumeId), renewed.failed],
    [['csi-up'], []],
    'renew --all renews the published volume, and only it',
  );
  t.not(await readFile(join(target, 'tls.crt'), 'utf8'), certificate, 'with a new certificate');
});
