import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { ensureTargetDir, removeEmptyDir } from '../../../src/volume/target/target-dir.js';
import { recordingLogger } from '../../support/recording-logger.js';
import { tempDir } from '../../support/temp-dir.js';

t.test(
  'ensureTargetDir creates nested dirs, says whether it did, and names the path on failure',
  async (t) => {
    const dir = await tempDir(t);
    t.equal(await ensureTargetDir(join(dir, 'a', 'b')), true, 'created, with its parent');
    t.ok((await stat(join(dir, 'a', 'b'))).isDirectory());
    t.equal(await ensureTargetDir(join(dir, 'a', 'b')), false, 'there already');
    t.equal(await ensureTargetDir(join(dir, 'a', 'c')), true, 'created under an existing parent');
    await writeFile(join(dir, 'f'), '');
    await t.rejects(ensureTargetDir(join(dir, 'f', 'x')), {
      name: 'VolumeError',
      message: /cannot create target path .*f\/x/,
    });
  },
);

t.test(
  'removeEmptyDir: removes empty, accepts missing, leaves non-empty with a warning',
  async (t) => {
    const dir = await tempDir(t);
    const logger = recordingLogger();
    await mkdir(join(dir, 'empty'));
    await removeEmptyDir(join(dir, 'empty'), logger);
    await t.rejects(stat(join(dir, 'empty')), { code: 'ENOENT' });
    await removeEmptyDir(join(dir, 'missing'), logger);
    await mkdir(join(dir, 'full'));
    await writeFile(join(dir, 'full', 'x'), '');
    await removeEmptyDir(join(dir, 'full'), logger);
    t.ok((await stat(join(dir, 'full'))).isDirectory());
    t.same(logger.records, [
      ['warn', { path: join(dir, 'full') }, 'target path is not empty after unpublish; leaving it'],
    ]);
    await writeFile(join(dir, 'file'), '');
    await t.rejects(removeEmptyDir(join(dir, 'file'), logger), {
      name: 'VolumeError',
      message: /cannot remove target path .*file: ENOTDIR/,
    });
  },
);
