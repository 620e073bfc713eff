import { join } from 'node:path';
import t from 'tap';
import { DataRoot } from '../../../src/volume/data-root.js';
import { writeMetadata } from '../../../src/volume/metadata.js';
import { overlapsDataRoot, unpublishScope } from '../../../src/volume/target/publish-scope.js';
import { tempDir } from '../../support/temp-dir.js';

t.test('overlapsDataRoot: the root itself, anything in it, and its ancestors', async (t) => {
  const root = '/var/lib/cert-csi/volumes';
  for (const target of [root, `${root}/`, `${root}/csi-a/data`, '/var/lib', '/']) {
    t.ok(overlapsDataRoot(target, root), target);
  }
  for (const target of ['/var/lib/cert-csi/volumes-2', '/var/lib/kubelet/pods/x/mount']) {
    t.notOk(overlapsDataRoot(target, root), target);
  }
  t.ok(overlapsDataRoot('/anything', '/'), 'a data root at / overlaps every target');
});

t.test('unpublishScope tells what an unpublish may touch', async (t) => {
  const dir = await tempDir(t);
  const root = new DataRoot(join(dir, 'root'));
  await root.ensure();
  const target = join(dir, 'pods', 'a', 'mount');
  t.same(await unpublishScope(root, 'csi-a', target), { kind: 'unknown' }, 'no volume dir');
  await root.ensureVolume('csi-a');
  t.same(await unpublishScope(root, 'csi-a', target), { kind: 'unrecorded' }, 'no metadata.json');
  await writeMetadata(root, { volumeId: 'csi-a', targetPath: target, volumeContext: {} });
  t.same(await unpublishScope(root, 'csi-a', target), { kind: 'recorded' });
  t.same(
    await unpublishScope(root, 'csi-a', `${target}/`),
    { kind: 'recorded' },
    'same path, normalized',
  );
  const elsewhere = { kind: 'elsewhere', recordedTarget: target };
  t.same(await unpublishScope(root, 'csi-a', join(dir, 'pods', 'b', 'mount')), elsewhere);
  t.same(await unpublishScope(root, 'csi-a', root.root), elsewhere, 'naming the recorded target');
});
