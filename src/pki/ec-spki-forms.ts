/**
 * The SubjectPublicKeyInfo of an uncompressed point on a named NIST curve, by its JWK curve
 * name: a fixed prefix (SEQUENCE { SEQUENCE { id-ecPublicKey, the curve }, BIT STRING with no
 * unused bits, 0x04 }) then x and y, each `coordinate` bytes; `algorithm` is the inner
 * AlgorithmIdentifier alone, as a PKCS#8 PrivateKeyInfo names it. OpenSSL 3's DER encoder and
 * decoder for keys cost about twice its JWK import and ten times its JWK export, so SPKIs of
 * these keys are built (public-key-info.ts) and read (spki-import.ts) through this table, and
 * their PKCS#8 forms built (private-key-info.ts).
 */
export const EC_SPKI_FORMS: ReadonlyArray<{
  crv: string;
  prefix: Buffer;
  algorithm: Buffer;
  coordinate: number;
}> = [
  {
    crv: 'P-256',
    prefix: Buffer.from('3059301306072a8648ce3d020106082a8648ce3d03010703420004', 'hex'),
    algorithm: Buffer.from('301306072a8648ce3d020106082a8648ce3d030107', 'hex'),
    coordinate: 32,
  },
  {
    crv: 'P-384',
    prefix: Buffer.from('3076301006072a8648ce3d020106052b8104002203620004', 'hex'),
    algorithm: Buffer.from('301006072a8648ce3d020106052b81040022', 'hex'),
    coordinate: 48,
  },
  {
    crv: 'P-521',
    prefix: Buffer.from('30819b301006072a8648ce3d020106052b810400230381860004', 'hex'),
    algorithm: Buffer.from('301006072a8648ce3d020106052b81040023', 'hex'),
    coordinate: 66,
  },
];
