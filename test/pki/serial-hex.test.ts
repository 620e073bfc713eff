import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { readCertificateFields, serialHex } from '../../src/pki/certificate-fields.js';
import { decodePemBlocks } from '../../src/pki/pem.js';

const run = promisify(execFile);

const serialOf = (pem: string) => {
  const [block] = decodePemBlocks(pem);
  if (!block) throw new Error('no PEM block');
  return serialHex(readCertificateFields(block.der).serialNumber);
};

t.test('serialHex prints a serial as OpenSSL and node do', async (t) => {
  const dir = t.testdir();
  const key = join(dir, 'key.pem');
  await run('openssl', [
    'genpkey',
    '-algorithm',
    'EC',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-out',
    key,
  ]);
  // Zero, one byte, a top bit that needs a 0x00 pad, a leading zero nibble, a long random one.
  for (const serial of [
    '0',
    '1',
    '0x80',
    '0x0a01',
    '0xff00',
    '0x00ab',
    '0x7f3c9a1b2c3d4e5f60718293a4b5c6d7e8f90a1b',
  ]) {
    const out = join(dir, 'cert.pem');
    await run('openssl', [
      'req',
      '-x509',
      '-key',
      key,
      '-subj',
      '/CN=s',
      '-days',
      '1',
      '-set_serial',
      serial,
      '-out',
      out,
    ]);
    const pem = await readFile(out, 'utf8');
    const node = new X509Certificate(pem).serialNumber.toUpperCase();
    const { stdout } = await run('openssl', ['x509', '-in', out, '-noout', '-serial']);
    t.equal(serialOf(pem), node, `${serial}: as node's X509Certificate`);
    // Zero is the one difference: openssl prints 00, node (and generation.json before) 0.
    const openssl = serial === '0' ? 'serial=00' : `serial=${serialOf(pem)}`;
    t.equal(openssl, stdout.trim(), `${serial}: as openssl x509 -serial`);
  }
  t.equal(serialHex(Uint8Array.of(0, 0x8a)), '8A', 'the sign pad is no digit');
  t.equal(serialHex(Uint8Array.of(0)), '0');
});
