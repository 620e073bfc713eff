// Issue 9, classes 4 and 5: a publish never follows a symlinked target or hides a foreign
// directory, and an unpublish touches only the target recorded for its volume. Direct mode
// through the real socket here; bind mode with real mounts in a private mount namespace below.
import { mkdir, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import t, { type Test } from 'tap';
import { rejectsWith } from '../support/grpc-assert.js';
import { runNamespaceScenario } from '../support/mount-namespace.js';
import { embeddedCA, type PluginHarness, startPlugin } from '../support/plugin-harness.js';
import { scriptBeside } from '../support/project-files.js';

/** Nothing was issued: no volume dir, no CertificateRequest. */
async function nothingIssued(t: Test, p: PluginHarness): Promise<void> {
  t.same(await p.dataRoot.listVolumeIds(), [], 'no volume dir was created');
  t.same(await p.requests(), [], 'no CertificateRequest (no key was generated)');
}

t.test(
  'direct mode: a symlinked target is refused and the other dir stays untouched',
  async (t) => {
    const p = await startPlugin(t);
    const other = join(p.dir, 'other');
    await mkdir(other);
    await writeFile(join(other, 'precious'), 'keep me');
    const target = join(p.dir, 'pods', 'uid-1', 'mount');
    await mkdir(join(p.dir, 'pods', 'uid-1'), { recursive: true });
    await symlink(other, target);
    await rejectsWith(
      t,
      p.publish('csi-link', embeddedCA(), { target }),
      status.FAILED_PRECONDITION,
      /target path ".*uid-1\/mount" is a symlink; symlinks are not followed/,
    );
    t.same(await readdir(other), ['precious'], 'nothing written into the symlinked dir');
    await nothingIssued(t, p);
  },
);

t.test('direct mode: a target under a symlinked parent is refused', async (t) => {
  const p = await startPlugin(t);
  const elsewhere = join(p.dir, 'elsewhere');
  await mkdir(join(elsewhere, 'existing'), { recursive: true });
  await mkdir(join(p.dir, 'pods'));
  await symlink(elsewhere, join(p.dir, 'pods', 'uid-2'));
  for (const name of ['existing', 'created']) {
    await rejectsWith(
      t,
      p.publish('csi-parent', embeddedCA(), { target: join(p.dir, 'pods', 'uid-2', name) }),
      status.FAILED_PRECONDITION,
      /goes through a symlink: ".*pods\/uid-2.*" resolves to ".*elsewhere.*"; symlinks are not followed/,
    );
  }
  t.same(await readdir(elsewhere), ['existing'], 'no dir created through the symlink');
  t.same(await readdir(join(elsewhere, 'existing')), [], 'nothing written through it');
  await nothingIssued(t, p);
});

t.test('direct mode: a non-empty directory that is not ours is refused', async (t) => {
  const p = await startPlugin(t);
  const target = join(p.dir, 'pods', 'uid-3', 'mount');
  await mkdir(target, { recursive: true });
  await writeFile(join(target, 'app.conf'), 'mine');
  await rejectsWith(
    t,
    p.publish('csi-full', embeddedCA(), { target }),
    status.FAILED_PRECONDITION,
    /is a non-empty directory this volume did not create \(1 entry, such as "app\.conf"\)/,
  );
  t.same(await readdir(target), ['app.conf'], 'the dir is as it was');
  await nothingIssued(t, p);
});

t.test(
  'direct mode: a target in or above the data root, or that is a file, is refused',
  async (t) => {
    const p = await startPlugin(t);
    for (const target of [p.dataRoot.root, join(p.dataRoot.root, 'csi-x', 'data'), p.dir]) {
      await rejectsWith(
        t,
        p.publish('csi-root', embeddedCA(), { target }),
        status.FAILED_PRECONDITION,
        /overlaps the data root/,
      );
    }
    await writeFile(join(p.dir, 'a-file'), 'x');
    await rejectsWith(
      t,
      p.publish('csi-root', embeddedCA(), { target: join(p.dir, 'a-file') }),
      status.FAILED_PRECONDITION,
      /exists and is not a directory/,
    );
    await nothingIssued(t, p);
  },
);

t.test('direct mode: a volume never takes over the files of another volume', async (t) => {
  const p = await startPlugin(t);
  const { target: targetB } = await p.publish('csi-b', embeddedCA());
  const certB = await readFile(join(targetB, 'tls.crt'), 'utf8');
  await rejectsWith(
    t,
    p.publish('csi-a', embeddedCA(), { target: targetB }),
    status.FAILED_PRECONDITION,
    /is a non-empty directory this volume did not create \(6 entries, such as "ca\.crt"\)/,
  );
  t.equal(await readFile(join(targetB, 'tls.crt'), 'utf8'), certB, "B's files unchanged");
  t.same(await p.dataRoot.listVolumeIds(), ['csi-b'], 'no dir for A');
  await p.publish('csi-b', embeddedCA(), { target: targetB });
  t.equal(await readFile(join(targetB, 'tls.crt'), 'utf8'), certB, 'B republishes to its own');
});

t.test('direct mode: unpublish acts only on the target recorded for the volume', async (t) => {
  const p = await startPlugin(t);
  const { target: targetA } = await p.publish('csi-a', embeddedCA());
  const { target: targetB } = await p.publish('csi-b', embeddedCA());
  const certA = await readFile(join(targetA, 'tls.crt'), 'utf8');
  const certB = await readFile(join(targetB, 'tls.crt'), 'utf8');
  const intact = async (what: string) => {
    t.same(await p.dataRoot.listVolumeIds(), ['csi-a', 'csi-b'], `${what}: both volumes kept`);
    t.equal(await readFile(join(targetA, 'tls.crt'), 'utf8'), certA, `${what}: A's files kept`);
    t.equal(await readFile(join(targetB, 'tls.crt'), 'utf8'), certB, `${what}: B's files kept`);
    t.equal((await p.requests()).length, 2, `${what}: both requests kept`);
  };

  await p.unpublish('csi-unrelated', p.dataRoot.root);
  await intact('unpublish of an unknown volume at the data root');
  await p.unpublish('csi-unrelated', targetA);
  await intact('unpublish of an unknown volume at A');
  await p.unpublish('csi-a', targetB);
  await intact("unpublish of A at B's target");
  await p.unpublish('csi-a', p.dataRoot.root);
  await intact('unpublish of A at the data root');
  t.equal(p.manager.scheduledRenewals, 2, "A's renewal timer is still armed");

  await p.unpublish('csi-a', targetA);
  await t.rejects(stat(targetA), { code: 'ENOENT' }, 'A unpublished at its own target');
  t.same(await p.dataRoot.listVolumeIds(), ['csi-b']);
  t.equal(await readFile(join(targetB, 'tls.crt'), 'utf8'), certB, "B's files kept");
});

t.test('direct mode: an unpublished target swapped for a symlink is refused', async (t) => {
  const p = await startPlugin(t);
  const { target } = await p.publish('csi-swap', embeddedCA());
  const other = join(p.dir, 'other');
  await mkdir(other);
  await writeFile(join(other, 'precious'), 'keep me');
  await rm(target, { recursive: true });
  await symlink(other, target);
  await rejectsWith(
    t,
    p.unpublish('csi-swap', target),
    status.FAILED_PRECONDITION,
    /is a symlink; symlinks are not followed/,
  );
  t.same(await readdir(other), ['precious'], 'nothing removed through the symlink');
  t.same(await p.dataRoot.listVolumeIds(), ['csi-swap'], 'the volume stays for a retry');
  await rm(target);
  await p.unpublish('csi-swap', target);
  t.same(await p.dataRoot.listVolumeIds(), [], 'unpublished once the symlink is gone');
});

t.test('relative or unnormalized target paths are InvalidArgument on both calls', async (t) => {
  const p = await startPlugin(t);
  for (const [target, why] of [
    ['relative/mount', /target_path: must be an absolute path/],
    ['./mount', /target_path: must be an absolute path/],
    [`${p.dir}/pods/../volumes`, /target_path: must be a normalized absolute path/],
    [`${p.dir}//pods/x`, /target_path: must be a normalized absolute path/],
  ] as const) {
    await rejectsWith(
      t,
      p.publish('csi-rel', embeddedCA(), { target }),
      status.INVALID_ARGUMENT,
      why,
    );
    await rejectsWith(t, p.unpublish('csi-rel', target), status.INVALID_ARGUMENT, why);
  }
  await nothingIssued(t, p);
});

t.test(
  'bind mode, in a private mount namespace: symlinked and foreign targets refused, unpublish touches only its own mount',
  async (t) => {
    await runNamespaceScenario(t, {
      script: scriptBeside(import.meta.url, './fixtures/target-safety-plugin.ts'),
      what: 'bind mode checks',
      prefix: 'cert-csi-target-',
      checks: { atLeast: 20 },
      timeoutMs: 120_000,
    });
  },
);
