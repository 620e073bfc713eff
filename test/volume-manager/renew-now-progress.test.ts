import { join } from 'node:path';
import t from 'tap';
import type { RenewOutcome } from '../../src/volume-manager/control/control-protocol.js';
import { until } from '../support/eventually.js';
import { embeddedCA, startPlugin } from '../support/plugin-harness.js';

t.test('renewNow reports each volume to progress as soon as it is done', async (t) => {
  const p = await startPlugin(t);
  await p.publish('csi-one', embeddedCA({ 'csi.cert-manager.io/key-algorithm': 'ECDSA' }));
  await p.publish('csi-two', embeddedCA({ 'csi.cert-manager.io/key-algorithm': 'ECDSA' }));
  const snapshots: string[][] = [];
  const snapshot = (o: RenewOutcome) =>
    snapshots.push([...o.renewed.map((r) => r.volumeId), ...o.failed.map((f) => f.volumeId)]);

  const all = await p.manager.renewNow({ all: true }, snapshot);
  t.same(all.renewed.map((r) => r.volumeId).sort(), ['csi-one', 'csi-two']);
  t.same(
    snapshots.map((s) => s.length),
    [1, 2],
    'one call per finished volume, each with the volumes done so far',
  );

  snapshots.length = 0;
  const unknown = await p.manager.renewNow({ volumeId: 'csi-nope' }, snapshot);
  t.same(unknown.failed, [{ volumeId: 'csi-nope', error: 'not a volume managed by this plugin' }]);
  t.same(snapshots, [['csi-nope']], 'a volume that fails at once is reported too');
});

t.test(
  'a volume whose first publish is still waiting is not renewed, and holds up nothing',
  async (t) => {
    const p = await startPlugin(t);
    await p.publish('csi-ready', embeddedCA({ 'csi.cert-manager.io/key-algorithm': 'ECDSA' }));
    // Nobody signs for this issuer: the publish waits until its deadline (60 s by default).
    const waiting = p
      .publish(
        'csi-waiting',
        embeddedCA({
          'csi.cert-manager.io/issuer-name': 'nobody',
          'csi.cert-manager.io/issuer-group': 'example.com',
        }),
      )
      .catch((err: unknown) => err);
    await until(async () => (await p.requests()).length === 2, {
      what: 'the waiting request',
      timeoutMs: 30_000,
    });

    const all = await p.manager.renewNow({ all: true });
    t.same(
      all.renewed.map((r) => r.volumeId),
      ['csi-ready'],
    );
    t.same(all.failed, [
      {
        volumeId: 'csi-waiting',
        error: 'its first publish is still in progress: no certificate to renew yet',
      },
    ]);
    await p.unpublish('csi-waiting', join(p.dir, 'pods', 'csi-waiting', 'mount'));
    t.match(await waiting, { code: 10 }, 'the waiting publish ends as aborted by the unpublish');
  },
);
