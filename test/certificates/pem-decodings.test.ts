import t from 'tap';
import {
  certificateOfPem,
  decodedCertificatePem,
  decodedKeyPem,
  rememberKeyPem,
} from '../../src/certificates/pem-decodings.js';
import { createSelfSignedCa } from '../../src/pki/certificate.js';
import { encodePrivateKey, generatePrivateKey, publicKeysEqual } from '../../src/pki/keys.js';

const key = await generatePrivateKey({ algorithm: 'ECDSA' });
const other = await generatePrivateKey({ algorithm: 'ECDSA' });
const certificatePem = await createSelfSignedCa({
  key,
  commonName: 'decodings',
  durationMs: 3_600_000,
});

t.test('a key text is decoded once; another text is decoded afresh', async (t) => {
  const pem = encodePrivateKey(key, 'PKCS8');
  const first = decodedKeyPem(pem);
  t.ok(first.ok && publicKeysEqual(first.value, key), 'the key of the text');
  t.equal(decodedKeyPem(pem), first, 'the same decoding for the same text');
  // The same text in another string (as read from another object) finds it too.
  t.equal(decodedKeyPem(Buffer.from(pem).toString()), first);
  const second = decodedKeyPem(encodePrivateKey(other, 'PKCS8'));
  t.ok(second.ok && publicKeysEqual(second.value, other), 'another text, its own key');
  const garbage = decodedKeyPem('nope');
  t.notOk(garbage.ok, 'what does not decode is an error');
  t.equal(decodedKeyPem('nope'), garbage, 'remembered as well');
});

t.test('a remembered key is what its text decodes to, without decoding', async (t) => {
  const pem = encodePrivateKey(other, 'PKCS8');
  const fresh = await generatePrivateKey({ algorithm: 'ECDSA' });
  const freshPem = encodePrivateKey(fresh, 'PKCS8');
  rememberKeyPem(freshPem, fresh);
  const found = decodedKeyPem(freshPem);
  t.ok(found.ok && found.value === fresh, 'the very key it was encoded from');
  t.not(decodedKeyPem(pem), found);
});

t.test('a certificate text is parsed once; what does not parse throws each time', async (t) => {
  const parsed = decodedCertificatePem(certificatePem);
  t.ok(parsed.ok && publicKeysEqual(parsed.value.publicKey, key));
  t.equal(decodedCertificatePem(certificatePem), parsed, 'the same parse for the same text');
  t.equal(certificateOfPem(certificatePem), parsed.ok ? parsed.value : undefined);
  t.throws(() => certificateOfPem('nope'));
  t.throws(() => certificateOfPem('nope'), 'the remembered error is thrown again');
  t.notOk(decodedCertificatePem('nope').ok);
});
