import { mkdir, readFile, stat } from 'node:fs/promises';
import t from 'tap';
import { DataRoot } from '../../src/volume/data-root.js';
import {
  readJksPassword,
  readPendingKey,
  readPkcs12Password,
  removePendingKey,
  removePkcs12Password,
  writeJksPassword,
  writePendingKey,
  writePkcs12Password,
} from '../../src/volume/volume-secrets.js';
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
  await t.rejects(readPendingKey(root, ID), { message: /cannot read pending key file .*EISDIR/ });
  await t.rejects(removePendingKey(root, ID), { message: /cannot remove pending key file/ });
});
