import { X509Certificate } from 'node:crypto';
import t from 'tap';
import {
  generationFile,
  recordedGeneration,
} from '../../src/volume-manager/issuance/generation-file.js';
import { makeCA } from '../support/issuer-fixtures.js';

const text = (s: string) => Buffer.from(s);

t.test('recordedGeneration: the counter of a file, 0 for anything that holds none', async (t) => {
  const cases: [string, Uint8Array | undefined, number][] = [
    ['no file', undefined, 0],
    ['a counter', text('{"generation":7,"reason":"renewed"}\n'), 7],
    ['not JSON', text('{"generation":'), 0],
    ['null', text('null'), 0],
    ['a string counter', text('{"generation":"7"}'), 0],
    ['zero', text('{"generation":0}'), 0],
    ['negative', text('{"generation":-3}'), 0],
    ['a fraction', text('{"generation":1.5}'), 0],
    ['beyond safe integers', text('{"generation":9007199254740993}'), 0],
  ];
  for (const [what, content, expected] of cases) {
    t.equal(recordedGeneration(content), expected, what);
  }
});

t.test('generationFile: one above the previous, the facts of the certificate', async (t) => {
  const { certificatePem } = await makeCA();
  const leaf = new X509Certificate(certificatePem);
  const record = JSON.parse(
    Buffer.from(generationFile(4, Buffer.from(certificatePem), 'renewed')).toString(),
  );
  t.same(record, {
    generation: 5,
    serial: leaf.serialNumber.toUpperCase(),
    notBefore: new Date(leaf.validFrom).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    notAfter: new Date(leaf.validTo).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    reason: 'renewed',
  });
  t.same(
    JSON.parse(Buffer.from(generationFile(0, text('junk'), 'trust-bundle-changed')).toString()),
    { generation: 1, reason: 'trust-bundle-changed' },
    'a certificate that cannot be read: the counter and reason alone',
  );
  t.equal(recordedGeneration(generationFile(41, text('junk'), 'issued')), 42, 'reads back');
});
