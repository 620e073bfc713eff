import t from 'tap';
import { RenewalsAsked } from '../../src/volume-manager/state/renewals-asked.js';

t.test('a volume is asked until each request for it is done', async (t) => {
  const asked = new RenewalsAsked();
  t.same(asked.volumeIds(), [], 'none at first');
  asked.ask(['csi-b', 'csi-a']);
  asked.ask(['csi-b']);
  t.same(asked.volumeIds(), ['csi-a', 'csi-b'], 'sorted, each once');
  asked.done('csi-b');
  t.same(asked.volumeIds(), ['csi-a', 'csi-b'], 'csi-b: one request left');
  asked.done('csi-b');
  asked.done('csi-a');
  t.same(asked.volumeIds(), [], 'every request done');
  asked.done('csi-a');
  asked.ask(['csi-a']);
  t.same(asked.volumeIds(), ['csi-a'], 'a done with nothing asked counts for nothing');
});
