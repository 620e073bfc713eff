import t from 'tap';
import { spkiOf } from '../../src/pki/keys.js';
import { decodeGoPemBlocks } from '../../src/pki/pem.js';
import {
  createStubPkcs10Request,
  PodKeyError,
  requestedPublicKey,
} from '../../src/pki/pod-certificate-key.js';
import { newKey } from '../support/pod-certificate-fixtures.js';

t.test(
  'requestedPublicKey reads the key of either encoding without checking a proof',
  async (t) => {
    const key = await newKey();
    const stub = (await createStubPkcs10Request(key)).toString('base64');
    const pkix = spkiOf(key).toString('base64');
    t.ok(spkiOf(requestedPublicKey({ stubPKCS10Request: stub })).equals(spkiOf(key)), 'stub');
    t.ok(spkiOf(requestedPublicKey({ pkixPublicKey: pkix })).equals(spkiOf(key)), 'pkix, no proof');
    t.ok(
      spkiOf(requestedPublicKey({ pkixPublicKey: pkix, stubPKCS10Request: stub })).equals(
        spkiOf(key),
      ),
      'the stub wins, as it does for 1.36 requests',
    );
    const missing = (material: Parameters<typeof requestedPublicKey>[0], message: RegExp) =>
      t.throws(() => requestedPublicKey(material), {
        constructor: PodKeyError,
        problem: 'missing',
        message,
      });
    missing({}, /neither stubPKCS10Request nor pkixPublicKey/);
    missing({ pkixPublicKey: 'AAAA' }, /pkixPublicKey does not hold a DER SubjectPublicKeyInfo/);
    missing({ stubPKCS10Request: 'AAAA' }, /^stubPKCS10Request: malformed DER/);
    // SEQUENCE { SEQUENCE {} }: a request without an info body.
    missing(
      { stubPKCS10Request: Buffer.from([0x30, 0x02, 0x30, 0x00]).toString('base64') },
      /missing public key/,
    );
    // SEQUENCE { } : no info at all.
    missing(
      { stubPKCS10Request: Buffer.from([0x30, 0x00]).toString('base64') },
      /empty certificate request/,
    );
    // SEQUENCE { SEQUENCE { INTEGER 0, SEQUENCE {}, SEQUENCE { NULL } } }: a "key" that is none.
    const notAKey = Buffer.from([
      0x30, 0x0b, 0x30, 0x09, 0x02, 0x01, 0x00, 0x30, 0x00, 0x30, 0x02, 0x05, 0x00,
    ]);
    missing(
      { stubPKCS10Request: notAKey.toString('base64') },
      /stubPKCS10Request does not hold a DER SubjectPublicKeyInfo/,
    );
  },
);

t.test("decodeGoPemBlocks finds what Go's pem.Decode finds", async (t) => {
  const block = (label: string, body = 'AQID') =>
    `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;
  const labels = (text: string) => decodeGoPemBlocks(text).map((b) => b.label);
  t.same(decodeGoPemBlocks(block('CERTIFICATE')), [
    { label: 'CERTIFICATE', headers: {}, der: new Uint8Array([1, 2, 3]) },
  ]);
  t.same(
    labels(`junk before\n${block('A')}between\n${block('B')}after`),
    ['A', 'B'],
    'text around blocks',
  );
  t.same(
    labels(`x-----BEGIN A-----\nAQID\n-----END A-----\n${block('B')}`),
    ['B'],
    'BEGIN must start a line',
  );
  t.same(labels('-----BEGIN A-----\r\nAQID\r\n-----END A-----\r\n'), ['A'], 'CRLF');
  t.same(labels('-----BEGIN A-----\n-----END A-----\n'), ['A'], 'an empty block');
  t.same(
    labels(`-----BEGIN A----\nAQID\n-----END A-----\n${block('B')}`),
    ['B'],
    'a bad BEGIN line is skipped',
  );
  t.same(
    labels(`-----BEGIN A-----\nAQID\n-----END B-----\n${block('C')}`),
    ['C'],
    'mismatched END',
  );
  t.same(
    labels(`-----BEGIN A-----\nAQID\n-----END A-----x\n${block('C')}`),
    ['C'],
    'junk after END',
  );
  t.same(labels(`-----BEGIN A-----\nAQID\n-----END A`), [], 'a cut END line');
  t.same(labels(`-----BEGIN A-----\nA?ID\n-----END A-----\n${block('C')}`), ['C'], 'bad base64');
  t.same(
    labels(`-----BEGIN A-----\nAQID\n${block('C')}`.replace('-----END C', 'xx')),
    [],
    'no END at all',
  );
  t.same(labels('-----BEGIN A-----\nKey: value'), [], 'cut inside the headers: Go stops looking');
  const headed = decodeGoPemBlocks(
    '-----BEGIN A-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: x\n\nAQID\n-----END A-----\n',
  );
  t.same(headed, [
    {
      label: 'A',
      headers: { 'Proc-Type': '4,ENCRYPTED', 'DEK-Info': 'x' },
      der: new Uint8Array([1, 2, 3]),
    },
  ]);
  t.same(
    labels('-----BEGIN A-----\n A Q\tI D \n-----END A-----\n'),
    ['A'],
    'spaces and tabs in the body',
  );
});
