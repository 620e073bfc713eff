import t from 'tap';
import { VolumeError } from '../../src/volume/errors.js';
import {
  isValidVolumeId,
  MAX_VOLUME_ID_LENGTH,
  validateVolumeId,
} from '../../src/volume/volume-id.js';

t.test('accepts kubelet ids and other safe single segments', async (t) => {
  for (const id of [
    `csi-${'ab12'.repeat(16)}`,
    'vol-id',
    'a',
    'A.b_c-9',
    '.hidden',
    'x'.repeat(MAX_VOLUME_ID_LENGTH),
  ]) {
    t.doesNotThrow(() => validateVolumeId(id), id);
    t.ok(isValidVolumeId(id));
  }
});

t.test('rejects anything that is not one safe path segment, naming the problem', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['', /invalid volume id "": it is empty/],
    ['x'.repeat(MAX_VOLUME_ID_LENGTH + 1), /129 characters long, at most 128/],
    ['a/b', /only letters, digits/],
    ['../etc', /only letters, digits/],
    ['a b', /only letters, digits/],
    ['vol\0', /only letters, digits/],
    ['é', /only letters, digits/],
    ['.', /must not be "\." or start with "\.\."/],
    ['..', /must not be "\." or start with "\.\."/],
    ['..data', /must not be "\." or start with "\.\."/],
  ];
  for (const [id, message] of cases) {
    t.throws(() => validateVolumeId(id), new VolumeError(''), JSON.stringify(id));
    t.throws(() => validateVolumeId(id), { message }, JSON.stringify(id));
    t.notOk(isValidVolumeId(id));
  }
});

t.test('a very long id is shortened in the message', async (t) => {
  const id = 'y'.repeat(5000);
  t.throws(() => validateVolumeId(id), { message: /"y{32}…"/ });
});
