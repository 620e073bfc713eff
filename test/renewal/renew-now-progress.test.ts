import t from 'tap';
import type { RenewOutcome } from '../../src/renewal/renew-protocol.js';
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
