import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { writeAtomically } from '../../src/fs/atomic-writer.js';
import { encodePrivateKey, generatePrivateKey } from '../../src/pki/keys.js';
import { DataRoot } from '../../src/volume/data-root.js';
import { writeJksPassword, writePkcs12Password } from '../../src/volume/volume-secrets.js';
import {
  readStoredMetadata,
  storedKey,
  storedSpec,
} from '../../src/volume-manager/state/stored-volume.js';
import { tempDir } from '../support/temp-dir.js';
import { makeVolume, podContext } from './renew-fixtures.js';

async function dataRoot(t: Test): Promise<DataRoot> {
  const root = new DataRoot(join(await tempDir(t), 'volumes'));
  await root.ensure();
  return root;
}

t.test('stored metadata: undefined without a dir or with an unreadable file', async (t) => {
  const root = await dataRoot(t);
  t.equal(await readStoredMetadata(root, 'csi-missing'), undefined);
  await makeVolume(root, 'csi-ok');
  t.equal((await readStoredMetadata(root, 'csi-ok'))?.volumeId, 'csi-ok');
  await makeVolume(root, 'csi-broken');
  await writeFile(root.metadataPath('csi-broken'), 'not json');
  t.equal(await readStoredMetadata(root, 'csi-broken'), undefined);
});

t.test('the stored spec takes the PKCS#12 password kept beside the metadata', async (t) => {
  const root = await dataRoot(t);
  const volumeContext = podContext({
    'csi.cert-manager.io/pkcs12-enable': 'true',
    'csi.cert-manager.io/pkcs12-filename': 'keystore.p12',
  });
  await makeVolume(root, 'csi-p12', { volumeContext });
  await writePkcs12Password(root, 'csi-p12', 's3cret');
  const metadata = await readStoredMetadata(root, 'csi-p12');
  if (!metadata) throw new Error('metadata of csi-p12 not found');
  const spec = await storedSpec(root, 'csi-p12', metadata);
  t.equal(spec.files.pkcs12?.password, 's3cret');
  t.equal(spec.files.pkcs12?.filename, 'keystore.p12');

  await makeVolume(root, 'csi-jks', {
    volumeContext: podContext({ 'csi.cert-manager.io/jks-enable': 'true' }),
  });
  await writeJksPassword(root, 'csi-jks', 'jks-s3cret');
  const jksMetadata = await readStoredMetadata(root, 'csi-jks');
  if (!jksMetadata) throw new Error('metadata of csi-jks not found');
  t.same((await storedSpec(root, 'csi-jks', jksMetadata)).files.jks, {
    filename: 'keystore.jks',
    truststoreFilename: 'truststore.jks',
    password: 'jks-s3cret',
  });

  await makeVolume(root, 'csi-bad', {
    volumeContext: podContext({ 'csi.cert-manager.io/x': '1' }),
  });
  const bad = await readStoredMetadata(root, 'csi-bad');
  if (!bad) throw new Error('metadata of csi-bad not found');
  await t.rejects(storedSpec(root, 'csi-bad', bad), /csi\.cert-manager\.io\/x/);
});

t.test('the stored key: decoded when there, undefined when missing or undecodable', async (t) => {
  const root = await dataRoot(t);
  await makeVolume(root, 'csi-a');
  const metadata = await readStoredMetadata(root, 'csi-a');
  if (!metadata) throw new Error('metadata of csi-a not found');
  const spec = await storedSpec(root, 'csi-a', metadata);
  t.equal(await storedKey(root, 'csi-a', spec), undefined, 'no key file yet');
  const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
  await writeAtomically(root.dataDir('csi-a'), {
    [spec.files.privateKey]: Buffer.from(encodePrivateKey(key, 'PKCS8')),
  });
  const read = await storedKey(root, 'csi-a', spec);
  t.ok(read?.equals(key), 'the key on disk');
  await writeAtomically(root.dataDir('csi-a'), { [spec.files.privateKey]: Buffer.from('junk') });
  t.equal(await storedKey(root, 'csi-a', spec), undefined, 'an undecodable key is replaced');
});
