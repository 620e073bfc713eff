import t from 'tap';
import {
  secretCertificate,
  secretKey,
  secretKeyPairs,
} from '../../src/certificates/secret-contents.js';
import { createSelfSignedCa } from '../../src/pki/certificate.js';
import { encodePrivateKey, generatePrivateKey, publicKeysEqual } from '../../src/pki/keys.js';
import { tlsSecret } from '../support/builders/index.js';

const key = await generatePrivateKey({ algorithm: 'ECDSA' });
const other = await generatePrivateKey({ algorithm: 'ECDSA' });
const ca = await createSelfSignedCa({ key, commonName: 'contents', durationMs: 3_600_000 });
const keyPem = encodePrivateKey(key, 'PKCS8');
const otherPem = encodePrivateKey(other, 'PKCS8');

t.test('what a Secret holds, decoded', async (t) => {
  const rows: Array<{
    name: string;
    data: Record<string, string>;
    key: 'none' | 'ok' | 'error';
    certificate: 'none' | 'ok' | 'error';
    pairs: boolean;
  }> = [
    {
      name: 'a matching pair',
      data: { 'tls.key': keyPem, 'tls.crt': ca },
      key: 'ok',
      certificate: 'ok',
      pairs: true,
    },
    {
      name: 'another key',
      data: { 'tls.key': otherPem, 'tls.crt': ca },
      key: 'ok',
      certificate: 'ok',
      pairs: false,
    },
    { name: 'no data', data: {}, key: 'none', certificate: 'none', pairs: false },
    {
      name: 'empty values',
      data: { 'tls.key': '', 'tls.crt': '' },
      key: 'none',
      certificate: 'none',
      pairs: false,
    },
    {
      name: 'garbage key',
      data: { 'tls.key': 'nope', 'tls.crt': ca },
      key: 'error',
      certificate: 'ok',
      pairs: false,
    },
    {
      name: 'garbage certificate',
      data: { 'tls.key': keyPem, 'tls.crt': 'nope' },
      key: 'ok',
      certificate: 'error',
      pairs: false,
    },
  ];
  for (const row of rows) {
    const secret = tlsSecret('ns', 'web', row.data);
    const state = (d: { ok: boolean } | undefined) =>
      d === undefined ? 'none' : d.ok ? 'ok' : 'error';
    t.equal(state(secretKey(secret)), row.key, `${row.name}: key`);
    t.equal(state(secretCertificate(secret)), row.certificate, `${row.name}: certificate`);
    t.equal(secretKeyPairs(secret), row.pairs, `${row.name}: pairs`);
  }
});

t.test('decoded once per Secret object; another object is decoded afresh', async (t) => {
  const first = tlsSecret('ns', 'web', { 'tls.key': keyPem, 'tls.crt': ca });
  const decoded = secretKey(first);
  t.equal(secretKey(first), decoded, 'the same decoding for the same object');
  t.equal(secretCertificate(first), secretCertificate(first));
  t.ok(decoded?.ok && publicKeysEqual(decoded.value, key), 'the key of the Secret');
  // A new version of the Secret is a new object (informers replace, never mutate).
  const second = tlsSecret('ns', 'web', { 'tls.key': otherPem, 'tls.crt': ca });
  const again = secretKey(second);
  t.ok(again?.ok && publicKeysEqual(again.value, other), 'the new version has its own key');
  t.notOk(secretKeyPairs(second));
  t.ok(secretKeyPairs(first), 'the old object keeps its own answer');
});
