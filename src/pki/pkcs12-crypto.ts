import { createCipheriv, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import {
  encodeOctetString,
  encodeOid,
  encodeSmallInteger,
  encodeTlv,
  sequence,
  Tag,
} from './der.js';
import { Pkcs12KeyPurpose, pkcs12Kdf, pkcs12Password } from './pkcs12-kdf.js';
import { rc2CbcEncrypt } from './rc2.js';

// The password-based encryption and integrity of PKCS#12, each returned with the DER that
// names it and carries its parameters, so the file assembler only places bytes.
//
// The legacy PBE schemes (key and IV from the PKCS#12 KDF, then RC2 or 3DES) are composed here:
// node-forge's PKCS#12 PBE (pki.pbe.getCipherForPKCS12PBE) only decrypts, and its encrypting
// counterpart (encryptPrivateKeyInfo) does 3DES over one private key only, neither RC2 nor an
// encrypted safe of certificates. The ciphers are forge's RC2 (rc2.ts) and node:crypto's 3DES.

/** Password-based ciphers for shrouded keys and encrypted safes. */
export type Pkcs12Cipher =
  | 'pbeWithSHAAnd40BitRC2-CBC'
  | 'pbeWithSHAAnd3-KeyTripleDES-CBC'
  | 'PBES2-PBKDF2-SHA256-AES-256-CBC';

/** MAC digests (the HMAC key comes from the PKCS#12 KDF over the same hash). */
export type Pkcs12MacHash = 'SHA-1' | 'SHA-256';

/** Iteration count and salt length of one use of a password. */
export interface Pkcs12PbeParams {
  iterations: number;
  saltLength: number;
}

const OID = {
  pbeWithSHAAnd3KeyTripleDESCBC: '1.2.840.113549.1.12.1.3',
  pbeWithSHAAnd40BitRC2CBC: '1.2.840.113549.1.12.1.6',
  pbes2: '1.2.840.113549.1.5.13',
  pbkdf2: '1.2.840.113549.1.5.12',
  hmacWithSHA256: '1.2.840.113549.2.9',
  aes256Cbc: '2.16.840.1.101.3.4.1.42',
  sha1: '1.3.14.3.2.26',
  sha256: '2.16.840.1.101.3.4.2.1',
} as const;

const NULL = encodeTlv(Tag.NULL, new Uint8Array(0));

/** The ciphertext of one encryption and the AlgorithmIdentifier DER a reader needs to decrypt it. */
export interface Pkcs12Encrypted {
  algorithm: Uint8Array;
  ciphertext: Buffer;
}

// pkcs-12PbeParams: the salt and iteration count of the legacy PBEs.
function legacyAlgorithm(oid: string, salt: Uint8Array, iterations: number): Uint8Array {
  return sequence([
    encodeOid(oid),
    sequence([encodeOctetString(salt), encodeSmallInteger(iterations)]),
  ]);
}

/** Encrypts plaintext under password with a PKCS#12 cipher and a fresh random salt (and IV). */
export function pkcs12Encrypt(
  cipher: Pkcs12Cipher,
  password: string,
  plaintext: Uint8Array,
  params: Pkcs12PbeParams,
): Pkcs12Encrypted {
  const salt = randomBytes(params.saltLength);
  const { iterations } = params;
  if (cipher === 'PBES2-PBKDF2-SHA256-AES-256-CBC') {
    // RFC 8018 wants the password as octets; OpenSSL 3, Java and go-pkcs12 all use UTF-8.
    const key = pbkdf2Sync(Buffer.from(password, 'utf8'), salt, iterations, 32, 'sha256');
    const iv = randomBytes(16);
    const encryptor = createCipheriv('aes-256-cbc', key, iv);
    const ciphertext = Buffer.concat([encryptor.update(plaintext), encryptor.final()]);
    const kdf = sequence([
      encodeOid(OID.pbkdf2),
      sequence([
        encodeOctetString(salt),
        encodeSmallInteger(iterations),
        sequence([encodeOid(OID.hmacWithSHA256), NULL]),
      ]),
    ]);
    const scheme = sequence([encodeOid(OID.aes256Cbc), encodeOctetString(iv)]);
    return { algorithm: sequence([encodeOid(OID.pbes2), sequence([kdf, scheme])]), ciphertext };
  }
  const secret = pkcs12Password(password);
  const derive = (purpose: number, length: number) =>
    pkcs12Kdf('sha1', secret, salt, iterations, purpose, length);
  const iv = derive(Pkcs12KeyPurpose.IV, 8);
  if (cipher === 'pbeWithSHAAnd40BitRC2-CBC') {
    const key = derive(Pkcs12KeyPurpose.KEY, 5);
    return {
      algorithm: legacyAlgorithm(OID.pbeWithSHAAnd40BitRC2CBC, salt, iterations),
      ciphertext: rc2CbcEncrypt(key, 40, iv, plaintext),
    };
  }
  // Three-key 3DES: DES ignores the parity bits of the 24 derived bytes, as every reader does.
  const encryptor = createCipheriv('des-ede3-cbc', derive(Pkcs12KeyPurpose.KEY, 24), iv);
  return {
    algorithm: legacyAlgorithm(OID.pbeWithSHAAnd3KeyTripleDESCBC, salt, iterations),
    ciphertext: Buffer.concat([encryptor.update(plaintext), encryptor.final()]),
  };
}

const MAC_HASHES = {
  'SHA-1': { kdf: 'sha1', oid: OID.sha1, length: 20 },
  'SHA-256': { kdf: 'sha256', oid: OID.sha256, length: 32 },
} as const;

/** The MacData DER over authSafe (RFC 7292 section 4): HMAC keyed by the PKCS#12 KDF with purpose MAC. */
export function pkcs12MacData(
  hash: Pkcs12MacHash,
  password: string,
  authSafe: Uint8Array,
  params: Pkcs12PbeParams,
): Uint8Array {
  const { kdf, oid, length } = MAC_HASHES[hash];
  const salt = randomBytes(params.saltLength);
  const secret = pkcs12Password(password);
  const key = pkcs12Kdf(kdf, secret, salt, params.iterations, Pkcs12KeyPurpose.MAC, length);
  const digest = createHmac(kdf, key).update(authSafe).digest();
  const digestInfo = sequence([sequence([encodeOid(oid), NULL]), encodeOctetString(digest)]);
  // iterations is DEFAULT 1, so DER leaves it out when it is 1 (go-pkcs12's legacy profiles).
  return sequence([
    digestInfo,
    encodeOctetString(salt),
    ...(params.iterations === 1 ? [] : [encodeSmallInteger(params.iterations)]),
  ]);
}
