import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import t from 'tap';
import { DataRoot } from '../../src/volume/data-root.js';
import {
  readJksPassword,
  readPendingKey,
  readPkcs12Password,
  removePendingKey,
  removePkcs12Password,
  SECRET_FILE_MAX_BYTES,
  writeJksPassword,
  writePendingKey,
  writePkcs12Password,
} from '../../src/volume/volume-secrets.js';
import { ODD_KINDS, oddFileMaker } from '../support/odd-files.js';
import { tempDir } from '../support/temp-dir.js';

const ID = 'vol-1';
const PEM = '-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----\n';

t.test('pending key and keystore password: write 0600, read, remove', async (t) => {
  const root = new DataRoot(`${await tempDir(t)}/root`);
  await root.ensure();
  await root.ensureVolume(ID);
  t.equal(await readPendingKey(root, ID), undefined);
  t.equal(await readPkcs12Password(root, ID), undefined);
  await writePendingKey(root, ID, PEM);
  await writePkcs12Password(root, ID, 'changeit');
  t.equal((await stat(root.pendingKeyPath(ID))).mode & 0o7777, 0o600);
  t.equal((await stat(root.secretsPath(ID))).mode & 0o7777, 0o600);
  t.equal(await readPendingKey(root, ID), PEM);
  t.equal(await readFile(root.secretsPath(ID), 'utf8'), 'changeit');
  t.equal(await readPkcs12Password(root, ID), 'changeit');
  t.equal(await removePendingKey(root, ID), true);
  t.equal(await removePendingKey(root, ID), false);
  t.equal(await removePkcs12Password(root, ID), true);
  t.equal(await readPkcs12Password(root, ID), undefined);
});

t.test('the JKS password has its own 0600 file beside the PKCS#12 one', async (t) => {
  const root = new DataRoot(`${await tempDir(t)}/root`);
  await root.ensure();
  await root.ensureVolume(ID);
  t.equal(await readJksPassword(root, ID), undefined);
  await writePkcs12Password(root, ID, 'p12-secret');
  await writeJksPassword(root, ID, 'jks-secret');
  t.equal(root.jksPasswordPath(ID), `${root.volumeDir(ID)}/jks-password`);
  t.equal((await stat(root.jksPasswordPath(ID))).mode & 0o7777, 0o600);
  t.equal(await readJksPassword(root, ID), 'jks-secret');
  t.equal(await readPkcs12Password(root, ID), 'p12-secret', 'each password keeps its own file');
  await t.rejects(writeJksPassword(new DataRoot(`${root.root}-missing`), ID, 'hunter2'), {
    message: /^cannot write JKS password file .*jks-password: ENOENT(?![\s\S]*hunter2)/,
  });
});

t.test('errors name the file and volume, never the value', async (t) => {
  const root = new DataRoot(`${await tempDir(t)}/root`);
  await root.ensure();
  await t.rejects(writePkcs12Password(root, ID, 'hunter2'), {
    name: 'VolumeError',
    volumeId: ID,
    message: /^cannot write PKCS#12 password file .*pkcs12-password: ENOENT(?![\s\S]*hunter2)/,
  });
  await root.ensureVolume(ID);
  await mkdir(root.pendingKeyPath(ID));
  await t.rejects(readPendingKey(root, ID), {
    message: `cannot read pending key file ${root.pendingKeyPath(ID)}: it is not a regular file but a directory: only regular files are read`,
  });
  await t.rejects(removePendingKey(root, ID), { message: /cannot remove pending key file/ });
  await writeFile(root.volumeDir('vol-file'), 'a file where a volume dir belongs');
  await t.rejects(readPkcs12Password(root, 'vol-file'), {
    message: /^cannot read PKCS#12 password file \S+: ENOTDIR/,
  });
});

t.test('a secret file that is a FIFO, a link or too large is refused at once', async (t) => {
  const root = new DataRoot(`${await tempDir(t)}/root`);
  await root.ensure();
  await root.ensureVolume(ID);
  const make = await oddFileMaker(t);
  for (const kind of ODD_KINDS) {
    const path = root.pendingKeyPath(ID);
    await make(path, kind, PEM);
    await t.rejects(
      readPendingKey(root, ID),
      { name: 'VolumeError', volumeId: ID, message: /it is not a regular file but a/ },
      kind,
    );
    await rm(path, { recursive: true });
  }
  const max = SECRET_FILE_MAX_BYTES['pending key'];
  await writeFile(root.pendingKeyPath(ID), 'k'.repeat(max + 1));
  await t.rejects(readPendingKey(root, ID), {
    message: `cannot read pending key file ${root.pendingKeyPath(ID)}: it is larger than 64 KiB, the most read for it: not read`,
  });
  // What could not be read back is never written; the value stays out of the message.
  await t.rejects(writePendingKey(root, ID, `${'secret'.repeat(max)}`), {
    message: /^cannot write pending key file \S+: it would be \d+ bytes, more than 64 KiB$/,
  });
  await writePkcs12Password(root, ID, 'p'.repeat(SECRET_FILE_MAX_BYTES['PKCS#12 password']));
  t.equal(
    (await readPkcs12Password(root, ID))?.length,
    4 * 1024 * 1024,
    'a password up to its cap round-trips',
  );
});
