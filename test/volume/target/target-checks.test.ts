import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { writeAtomically } from '../../../src/fs/atomic-writer.js';
import {
  checkTarget,
  refuseSymlinks,
  shownPath,
} from '../../../src/volume/target/target-checks.js';
import { tempDir } from '../../support/temp-dir.js';

const bytes = (s: string) => new TextEncoder().encode(s);

t.test('shownPath quotes a path and keeps only its last 100 characters', async (t) => {
  t.equal(shownPath('/a b/c'), '"/a b/c"');
  t.equal(shownPath('/x\ny'), '"/x\\ny"', 'control characters escaped');
  const long = `/${'d'.repeat(5000)}/mount`;
  const shown = shownPath(long);
  t.ok(shown.length <= 104, `at most ~100 characters (${shown.length})`);
  t.match(shown, /^"…d+\/mount"$/);
});

t.test('refuseSymlinks refuses dangling, looping and file ancestors', async (t) => {
  const dir = await tempDir(t);
  await refuseSymlinks(join(dir, 'not', 'yet', 'created'));
  t.pass('a path that does not exist yet under real dirs is fine');
  await symlink(join(dir, 'nowhere'), join(dir, 'dangling'));
  await t.rejects(refuseSymlinks(join(dir, 'dangling', 'mount')), {
    name: 'TargetPathError',
    message: /goes through a symlink: ".*dangling" does not resolve; symlinks are not followed/,
  });
  await t.rejects(refuseSymlinks(join(dir, 'dangling')), {
    name: 'TargetPathError',
    message: /"[^"]*dangling" is a symlink/,
  });
  await symlink('loop', join(dir, 'loop'));
  await t.rejects(refuseSymlinks(join(dir, 'loop', 'a', 'mount')), {
    name: 'TargetPathError',
    message: /".*loop" does not resolve/,
  });
  await writeFile(join(dir, 'file'), '');
  await t.rejects(refuseSymlinks(join(dir, 'file', 'mount')), {
    name: 'TargetPathError',
    message: /lies under ".*file", which is not a directory/,
  });
  await t.rejects(refuseSymlinks(join(dir, 'x'.repeat(300), 'mount')), {
    name: 'VolumeError',
    message: /cannot stat target path .*ENAMETOOLONG/,
  });
});

t.test('checkTarget accepts our own files only at the recorded target', async (t) => {
  const dir = await tempDir(t);
  const target = join(dir, 'mount');
  await checkTarget(target, { recorded: false });
  await mkdir(target);
  await checkTarget(target, { recorded: false });
  t.pass('a missing or empty target is fine');
  await writeAtomically(target, { 'tls.crt': bytes('c') });
  await checkTarget(target, { recorded: true });
  t.pass("the recorded target may hold the volume's files (republish)");
  await t.rejects(checkTarget(target, { recorded: false }), {
    name: 'TargetPathError',
    message: /non-empty directory this volume did not create \(3 entries, such as "tls\.crt"\)/,
  });
  await symlink('/etc/passwd', join(target, 'evil'));
  await t.rejects(checkTarget(target, { recorded: true }), {
    name: 'TargetPathError',
    message: /\(4 entries, such as "evil"\)/,
  });
});
