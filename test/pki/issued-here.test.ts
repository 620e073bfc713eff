import t from 'tap';
import { createSelfSignedCa } from '../../src/pki/certificate.js';
import { issuedHere } from '../../src/pki/issued-here.js';
import { generatePrivateKey } from '../../src/pki/keys.js';
import { decodePemBlocks } from '../../src/pki/pem.js';

t.test('a certificate issued here is known by its exact bytes, others are not', async (t) => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const pem = await createSelfSignedCa({ key, commonName: 'here', durationMs: 3600_000 });
  const der = decodePemBlocks(pem)[0]?.der ?? new Uint8Array();
  t.ok(issuedHere(der), 'the DER issue() produced');
  const padded = new Uint8Array(der.length + 3);
  padded.set(der, 3);
  t.ok(issuedHere(padded.subarray(3)), 'also as a view into a larger buffer');
  const changed = Uint8Array.from(der);
  changed[changed.length - 1] = (changed[changed.length - 1] ?? 0) ^ 1;
  t.notOk(issuedHere(changed), 'one byte different: unknown');
  t.notOk(issuedHere(new Uint8Array([0x30, 0])), 'never issued');
});
