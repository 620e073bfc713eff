import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import {
  findMount,
  mountContaining,
  parseMountInfo,
  readMountInfo,
  unescapeMountPath,
} from '../../src/volume/mountinfo.js';
import { tempDir } from '../support/temp-dir.js';

const SAMPLE = [
  '22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro',
  '36 22 0:39 / /csi-data rw,relatime shared:20 master:3 - tmpfs cert-csi rw,size=65536k,mode=700',
  '37 22 0:39 /vol\\0401/data /var/lib/kubelet/pods/p/volumes/tls\\040mount ro,relatime - tmpfs cert-csi rw,size=65536k,mode=700',
  '38 22 0:39 /other /var/lib/kubelet/pods/p/volumes/tls\\040mount ro - tmpfs cert-csi rw',
  '',
].join('\n');

t.test('parses fields, optional tags and octal escapes', async (t) => {
  const mounts = parseMountInfo(SAMPLE);
  t.equal(mounts.length, 4);
  t.same(mounts[1], {
    id: 36,
    parentId: 22,
    device: '0:39',
    root: '/',
    mountPoint: '/csi-data',
    options: ['rw', 'relatime'],
    fsType: 'tmpfs',
    source: 'cert-csi',
    superOptions: ['rw', 'size=65536k', 'mode=700'],
  });
  t.equal(mounts[2]?.root, '/vol 1/data');
  t.equal(mounts[2]?.mountPoint, '/var/lib/kubelet/pods/p/volumes/tls mount');
  t.same(mounts[0]?.options, ['rw', 'relatime']);
});

t.test('unescapes every octal escape the kernel writes', async (t) => {
  t.equal(unescapeMountPath('a\\040b\\011c\\012d\\134e'), 'a b\tc\nd\\e');
  t.equal(unescapeMountPath('plain'), 'plain');
});

t.test('malformed lines are reported with their number', async (t) => {
  for (const line of [
    '22 1 8:1 / / rw,relatime shared:1 ext4 /dev/sda1 rw',
    'x 1 8:1 / / rw - ext4 /dev/sda1 rw',
    '22 y 8:1 / / rw - ext4 /dev/sda1 rw',
    '22 1 8:1 / / rw - ext4 /dev/sda1',
    '22 1 8:1 / - ext4 /dev/sda1 rw',
  ]) {
    t.throws(
      () => parseMountInfo(`${SAMPLE}${line}\n`),
      {
        name: 'VolumeError',
        message: /malformed mountinfo line 5/,
      },
      line,
    );
  }
});

t.test(
  'findMount returns the top of stacked mounts; mountContaining the longest prefix',
  async (t) => {
    const mounts = parseMountInfo(SAMPLE);
    t.equal(findMount(mounts, '/var/lib/kubelet/pods/p/volumes/tls mount')?.id, 38);
    t.equal(findMount(mounts, '/csi-data/vol'), undefined);
    t.equal(mountContaining(mounts, '/csi-data/vol 1/data')?.id, 36);
    t.equal(mountContaining(mounts, '/csi-data')?.id, 36);
    t.equal(mountContaining(mounts, '/csi-database')?.id, 22, 'a prefix must end at a slash');
    t.equal(mountContaining(mounts, '/etc')?.id, 22);
    t.equal(mountContaining([], '/etc'), undefined);
  },
);

t.test('reads this process mount table; a missing file is an error naming it', async (t) => {
  const mounts = await readMountInfo();
  t.ok(
    mounts.some((m) => m.mountPoint === '/'),
    'the root is mounted',
  );
  const dir = await tempDir(t);
  await t.rejects(readMountInfo(join(dir, 'none')), {
    name: 'VolumeError',
    message: /cannot read mount table .*none/,
  });
  await writeFile(join(dir, 'mountinfo'), SAMPLE);
  t.equal((await readMountInfo(join(dir, 'mountinfo'))).length, 4);
});
