import t from 'tap';
import {
  DATA_ROOT_MEDIA,
  type DataRootAction,
  type DataRootMedium,
  DEFAULT_DATA_ROOT_MEDIUM,
  dataRootAction,
  isDataRootMedium,
} from '../../src/volume/data-root-medium.js';

// What start-up does with the data root, given what is mounted there on top, how many volumes it
// holds and the medium asked for.
const TABLE: [mounted: string | undefined, volumes: number, DataRootMedium, DataRootAction][] = [
  // A plain dir: a tmpfs unless volumes live in it already.
  [undefined, 0, 'tmpfs', 'mount-tmpfs'],
  [undefined, 2, 'tmpfs', 'refuse-hidden-volumes'],
  [undefined, 0, 'disk', 'use-disk'],
  [undefined, 2, 'disk', 'use-disk'],
  // A mount of another filesystem (the DaemonSet's hostPath): the same.
  ['ext4', 0, 'tmpfs', 'mount-tmpfs'],
  ['xfs', 1, 'tmpfs', 'refuse-hidden-volumes'],
  ['overlay', 0, 'tmpfs', 'mount-tmpfs'],
  ['ext4', 0, 'disk', 'use-disk'],
  ['ext4', 1, 'disk', 'use-disk'],
  // ramfs has no size limit and is not what was asked for.
  ['ramfs', 0, 'tmpfs', 'mount-tmpfs'],
  // A tmpfs on top (ours from an earlier run, or a bind mount of one): reused, never stacked.
  ['tmpfs', 0, 'tmpfs', 'reuse-tmpfs'],
  ['tmpfs', 3, 'tmpfs', 'reuse-tmpfs'],
  ['tmpfs', 0, 'disk', 'keep-tmpfs'],
  ['tmpfs', 3, 'disk', 'keep-tmpfs'],
];

t.test('the data root action for each mount found, volume count and medium', async (t) => {
  for (const [mountedFsType, volumes, medium, expected] of TABLE) {
    t.equal(
      dataRootAction({ mountedFsType, volumes }, medium),
      expected,
      `${mountedFsType ?? 'plain dir'}, ${volumes} volumes, medium ${medium}`,
    );
  }
});

t.test('the media: tmpfs by default, names checked exactly', async (t) => {
  t.same(DATA_ROOT_MEDIA, ['tmpfs', 'disk']);
  t.equal(DEFAULT_DATA_ROOT_MEDIUM, 'tmpfs', 'keys stay off the disk unless asked');
  for (const medium of DATA_ROOT_MEDIA) t.ok(isDataRootMedium(medium), medium);
  for (const text of ['', 'TMPFS', 'ram', 'disk ', 'memory']) {
    t.notOk(isDataRootMedium(text), JSON.stringify(text));
  }
});
