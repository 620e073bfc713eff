import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import {
  escapeMountPath,
  findMount,
  mountContaining,
  parseMountInfo,
  readMountInfo,
  readMountsAt,
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

t.test(
  'findMount: the top of a stack is decided by the parent links, not the listing order',
  async (t) => {
    // The DaemonSet layout: a hostPath bind of a disk dir at the data root, the plugin's tmpfs over it.
    const stacked = parseMountInfo(
      [
        '22 1 8:1 / / rw - ext4 /dev/sda1 rw',
        '40 22 8:1 /var/lib/cert-csi/volumes /data rw shared:1 - ext4 /dev/sda1 rw',
        '41 40 0:50 / /data rw shared:30 - tmpfs cert-csi rw,size=65536k,mode=700',
      ].join('\n'),
    );
    t.equal(findMount(stacked, '/data')?.fsType, 'tmpfs', 'the tmpfs over the hostPath');
    t.equal(findMount([...stacked].reverse(), '/data')?.id, 41, 'whatever the order');
    t.equal(
      mountContaining([...stacked].reverse(), '/data/csi-1/data')?.id,
      41,
      'files live on it',
    );
    // move_mount(2) MOVE_MOUNT_BENEATH: the newer mount 50 goes under 41, which now sits on it.
    const beneath = parseMountInfo(
      [
        '22 1 8:1 / / rw - ext4 /dev/sda1 rw',
        '41 50 0:50 / /data rw - tmpfs cert-csi rw',
        '50 22 8:1 /disk /data rw - ext4 /dev/sda1 rw',
      ].join('\n'),
    );
    t.equal(findMount(beneath, '/data')?.id, 41, 'the mount on top although listed first');
    // A mount at /a/b hidden by a later mount over /a, then one at /a/b again: the links do not
    // decide between 30 and 32, the listing order does.
    const hidden = parseMountInfo(
      [
        '22 1 8:1 / / rw - ext4 /dev/sda1 rw',
        '30 22 0:40 / /a/b rw - tmpfs old rw',
        '31 22 0:41 / /a rw - tmpfs cover rw',
        '32 31 0:42 / /a/b rw - tmpfs new rw',
      ].join('\n'),
    );
    t.equal(findMount(hidden, '/a/b')?.source, 'new', 'the last of the unlinked ones');
    const loop = parseMountInfo(
      ['60 61 0:40 / /y rw - tmpfs a rw', '61 60 0:41 / /y rw - tmpfs b rw'].join('\n'),
    );
    t.equal(findMount(loop, '/y')?.id, 61, 'links in a loop (never written by a kernel): the last');
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

t.test('escapeMountPath writes what unescapeMountPath reads back', async (t) => {
  t.equal(escapeMountPath('a b\tc\nd\\e'), 'a\\040b\\011c\\012d\\134e');
  for (const path of ['/plain', '/with space/and\ttab', '/new\nline', '/back\\slash', '/ü ✓']) {
    t.equal(unescapeMountPath(escapeMountPath(path)), path, JSON.stringify(path));
  }
});

t.test(
  'readMountsAt: the mounts at exactly one mount point, as a full read finds them',
  async (t) => {
    const dir = await tempDir(t);
    const table = [
      SAMPLE.trimEnd(),
      // The path as another line's root or source, and as a prefix of another mount point.
      '39 22 0:40 /var/lib/kubelet/pods/p/volumes/tls\\040mount /elsewhere rw - tmpfs x rw',
      '40 22 0:41 / /var/lib/kubelet/pods/p/volumes/tls\\040mount/sub rw - tmpfs /var/lib/kubelet/pods/p/volumes/tls\\040mount rw',
      '',
    ].join('\n');
    const path = join(dir, 'mountinfo');
    await writeFile(path, table);
    const all = await readMountInfo(path);
    for (const mountPoint of [
      '/var/lib/kubelet/pods/p/volumes/tls mount',
      '/csi-data',
      '/',
      '/elsewhere',
      '/var/lib/kubelet/pods/p/volumes/tls mount/sub',
      '/vol 1/data',
      '/not/mounted',
    ]) {
      t.same(
        await readMountsAt(mountPoint, path),
        all.filter((m) => m.mountPoint === mountPoint),
        mountPoint,
      );
    }
    t.same(
      (await readMountsAt('/var/lib/kubelet/pods/p/volumes/tls mount', path)).map((m) => m.id),
      [37, 38],
      'stacked mounts, in table order',
    );
    await t.rejects(readMountsAt('/', join(dir, 'none')), {
      name: 'VolumeError',
      message: /cannot read mount table .*none/,
    });
  },
);
