import { lstat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { fileKind } from '../../src/volume-manager/control/file-kind.js';
import { type OddKind, oddFileMaker } from '../support/odd-files.js';
import { tempDir } from '../support/temp-dir.js';

// The words the control socket's messages use for what is at its name instead of a socket
// (`cert-csi renew`'s "a FIFO is there, not a socket", the plugin's refusal to start, the
// legacy cleanup's warning): each kind named, from a real entry's lstat.
t.test('every kind of entry is named as the messages say it', async (t) => {
  const dir = await tempDir(t, 'cert-csi-file-kind-');
  const make = await oddFileMaker(t);
  const regular = join(dir, 'regular');
  await writeFile(regular, 'x');
  const odd: [OddKind, string][] = [
    ['directory', 'a directory'],
    ['link-to-file', 'a symbolic link'],
    ['link-to-fifo', 'a symbolic link'],
    ['fifo', 'a FIFO'],
    ['socket', 'a socket'],
  ];
  t.equal(fileKind(await lstat(regular)), 'a regular file');
  for (const [kind, words] of odd) {
    const path = join(dir, kind);
    await make(path, kind);
    t.equal(fileKind(await lstat(path)), words, kind);
  }
  // A character device that exists everywhere, never written: read only by lstat.
  t.equal(fileKind(await lstat('/dev/null')), 'a device', '/dev/null');
});
