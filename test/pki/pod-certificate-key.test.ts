import { randomUUID } from 'node:crypto';
import t from 'tap';
import { generatePrivateKey, spkiOf } from '../../src/pki/keys.js';
import {
  createStubPkcs10Request,
  POD_CERTIFICATE_KEY_TYPES,
  PodKeyError,
  podCertificateKeyTypeOf,
  signPodUid,
  verifiedPodCertificateKey,
} from '../../src/pki/pod-certificate-key.js';
import { kubeletKey } from '../support/pod-certificates.js';

const b64 = (bytes: Buffer) => bytes.toString('base64');

function keyError(call: () => unknown): PodKeyError {
  try {
    call();
  } catch (err) {
    if (err instanceof PodKeyError) return err;
    throw err;
  }
  throw new Error('expected a PodKeyError');
}

t.test('every kubelet key type verifies in both forms and yields the requested key', async (t) => {
  for (const type of POD_CERTIFICATE_KEY_TYPES) {
    const key = await kubeletKey(type);
    const uid = randomUUID();
    const pkix = verifiedPodCertificateKey(
      {
        pkixPublicKey: b64(spkiOf(key)),
        proofOfPossession: b64(signPodUid(key, uid)),
      },
      uid,
    );
    t.equal(pkix.keyType, type, `${type}: 1.35 fields`);
    t.ok(spkiOf(pkix.publicKey).equals(spkiOf(key)), `${type}: 1.35 key is the requested one`);
    const stub = verifiedPodCertificateKey(
      { stubPKCS10Request: b64(await createStubPkcs10Request(key)) },
      uid,
    );
    t.equal(stub.keyType, type, `${type}: 1.36 stub request`);
    t.ok(spkiOf(stub.publicKey).equals(spkiOf(key)), `${type}: 1.36 key is the requested one`);
  }
});

t.test('a proof over another pod UID, or by another key, is a bad proof', async (t) => {
  for (const type of ['ECDSAP384', 'ED25519', 'RSA3072'] as const) {
    const key = await kubeletKey(type);
    const err = keyError(() =>
      verifiedPodCertificateKey(
        {
          pkixPublicKey: b64(spkiOf(key)),
          proofOfPossession: b64(signPodUid(key, 'another-uid')),
        },
        'the-pod-uid',
      ),
    );
    t.equal(err.problem, 'badProof', type);
    t.match(err.message, `proofOfPossession is not a ${type} signature of the pod UID`);
  }
  const other = await kubeletKey('ECDSAP256');
  const key = await kubeletKey('ECDSAP521');
  const err = keyError(() =>
    verifiedPodCertificateKey(
      {
        pkixPublicKey: b64(spkiOf(key)),
        proofOfPossession: b64(signPodUid(other, 'uid')),
      },
      'uid',
    ),
  );
  t.equal(err.problem, 'badProof');
});

t.test('a stub request whose signature does not verify is a bad proof', async (t) => {
  const der = await createStubPkcs10Request(await kubeletKey('ECDSAP256'));
  const tampered = Buffer.from(der);
  tampered.writeUInt8(tampered.readUInt8(tampered.length - 1) ^ 0x01, tampered.length - 1);
  const err = keyError(() => verifiedPodCertificateKey({ stubPKCS10Request: b64(tampered) }, 'u'));
  t.equal(err.problem, 'badProof');
  t.match(err.message, /^stubPKCS10Request: /);
});

t.test('key types kubelet never makes are unsupported, naming the supported ones', async (t) => {
  const rsa2048 = await generatePrivateKey({ algorithm: 'RSA', size: 2048 });
  t.equal(podCertificateKeyTypeOf(rsa2048), undefined);
  for (const material of [
    {
      pkixPublicKey: b64(spkiOf(rsa2048)),
      proofOfPossession: b64(signPodUid(rsa2048, 'u')),
    },
    { stubPKCS10Request: b64(await createStubPkcs10Request(rsa2048)) },
  ]) {
    const err = keyError(() => verifiedPodCertificateKey(material, 'u'));
    t.equal(err.problem, 'unsupportedKeyType');
    t.equal(
      err.message,
      'unsupported public key type; supported types are RSA3072, RSA4096, ECDSAP256, ECDSAP384, ECDSAP521 and ED25519',
    );
  }
});

t.test('missing, doubled or garbled key material is refused without echoing it', async (t) => {
  const key = await kubeletKey('ED25519');
  const pkixPublicKey = b64(spkiOf(key));
  const cases: Array<[string, Parameters<typeof verifiedPodCertificateKey>[0], RegExp]> = [
    ['nothing', {}, /carries no key/],
    ['key without proof', { pkixPublicKey }, /carries no key/],
    [
      'both encodings',
      {
        pkixPublicKey,
        proofOfPossession: 'AA==',
        stubPKCS10Request: b64(await createStubPkcs10Request(key)),
      },
      /must be empty when stubPKCS10Request is set/,
    ],
    [
      'garbage key',
      { pkixPublicKey: 'AAAA', proofOfPossession: 'AA==' },
      /not a DER SubjectPublicKeyInfo/,
    ],
    ['garbage stub', { stubPKCS10Request: 'AAAA' }, /^stubPKCS10Request: cannot parse/],
  ];
  for (const [name, material, message] of cases) {
    const err = keyError(() => verifiedPodCertificateKey(material, 'u'));
    t.equal(err.problem, 'missing', name);
    t.match(err.message, message, name);
    t.notMatch(err.message, pkixPublicKey, `${name}: key bytes not echoed`);
  }
});
