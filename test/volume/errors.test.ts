import t from 'tap';
import { VolumeError } from '../../src/volume/errors.js';

t.test('VolumeError carries the volume id and the cause when given', async (t) => {
  const cause = new Error('inner');
  const err = new VolumeError('outer', { volumeId: 'vol-1', cause });
  t.equal(err.name, 'VolumeError');
  t.equal(err.message, 'outer');
  t.equal(err.volumeId, 'vol-1');
  t.equal(err.cause, cause);
  t.ok(err instanceof Error);
  const bare = new VolumeError('bare');
  t.notOk('volumeId' in bare, 'no volumeId property when none is known');
  t.notOk('cause' in bare);
});
