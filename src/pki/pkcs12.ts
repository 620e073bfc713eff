import { createHash, type KeyObject, type X509Certificate } from 'node:crypto';
import { quoted } from '../api/echoed-value.js';
import { readCertificateFields } from './certificate-fields.js';
import { splitPemCertificates } from './chain.js';
import {
  contextTag,
  encodeOctetString,
  encodeOid,
  encodeSmallInteger,
  encodeTlv,
  sequence,
  setOf,
  Tag,
} from './der.js';
import { PkiError } from './errors.js';
import { publicKeysEqual } from './keys.js';
import {
  type Pkcs12Cipher,
  type Pkcs12MacHash,
  pkcs12Encrypt,
  pkcs12MacData,
} from './pkcs12-crypto.js';
import { describeSubject } from './subject.js';

// PKCS#12 (RFC 7292) keystores and Java truststores, laid out as go-pkcs12 (and so
// cert-manager) lays them out: the certificates in one password-encrypted safe, the key,
// shrouded on its own, in a plain one, and a MAC over both.

/**
 * The algorithm sets of cert-manager's `keystores.pkcs12.profile`. `Modern2026` (PBMAC1) is
 * not here: neither OpenSSL 3.0 nor Java 17 can read it.
 */
export type Pkcs12Profile = 'LegacyRC2' | 'LegacyDES' | 'Modern2023';

/** The profiles encodePkcs12 and encodePkcs12TrustStore accept. */
export const PKCS12_PROFILES: readonly Pkcs12Profile[] = ['LegacyRC2', 'LegacyDES', 'Modern2023'];

interface ProfileAlgorithms {
  certificates: Pkcs12Cipher;
  key: Pkcs12Cipher;
  mac: Pkcs12MacHash;
  macIterations: number;
  iterations: number;
  saltLength: number;
}

// go-pkcs12's LegacyRC2, LegacyDES and Modern2023 encoders, parameter for parameter.
const PROFILES: Record<Pkcs12Profile, ProfileAlgorithms> = {
  LegacyRC2: {
    certificates: 'pbeWithSHAAnd40BitRC2-CBC',
    key: 'pbeWithSHAAnd3-KeyTripleDES-CBC',
    mac: 'SHA-1',
    macIterations: 1,
    iterations: 2048,
    saltLength: 8,
  },
  LegacyDES: {
    certificates: 'pbeWithSHAAnd3-KeyTripleDES-CBC',
    key: 'pbeWithSHAAnd3-KeyTripleDES-CBC',
    mac: 'SHA-1',
    macIterations: 1,
    iterations: 2048,
    saltLength: 8,
  },
  Modern2023: {
    certificates: 'PBES2-PBKDF2-SHA256-AES-256-CBC',
    key: 'PBES2-PBKDF2-SHA256-AES-256-CBC',
    mac: 'SHA-256',
    macIterations: 2048,
    iterations: 2048,
    saltLength: 16,
  },
};

const OID = {
  data: '1.2.840.113549.1.7.1',
  encryptedData: '1.2.840.113549.1.7.6',
  certBag: '1.2.840.113549.1.12.10.1.3',
  shroudedKeyBag: '1.2.840.113549.1.12.10.1.2',
  x509Certificate: '1.2.840.113549.1.9.22.1',
  friendlyName: '1.2.840.113549.1.9.20',
  localKeyId: '1.2.840.113549.1.9.21',
  // Oracle's trustedKeyUsage: Java lists a certificate bag carrying it as a trustedCertEntry.
  javaTrustedKeyUsage: '2.16.840.1.113894.746875.1.1',
  anyExtendedKeyUsage: '2.5.29.37.0',
} as const;

/** Options of encodePkcs12. */
export interface Pkcs12Options {
  /** Alias of the key entry (friendlyName on key and leaf); Java shows it in `keytool -list`. */
  friendlyName?: string;
  /** Algorithms; default `Modern2023` (cert-manager's default is `LegacyRC2`). */
  profile?: Pkcs12Profile;
}

/** Options of encodePkcs12TrustStore. */
export interface Pkcs12TrustStoreOptions {
  /** Algorithms; default `Modern2023` (cert-manager's default is `LegacyRC2`). */
  profile?: Pkcs12Profile;
}

function profileAlgorithms(profile: Pkcs12Profile): ProfileAlgorithms {
  // Callers may hand over an unchecked string (a Certificate's spec); refuse it by name.
  if (!Object.hasOwn(PROFILES, profile)) {
    throw new PkiError(`unsupported PKCS#12 profile ${quoted(String(profile))}`);
  }
  return PROFILES[profile];
}

function attribute(oid: string, value: Uint8Array): Uint8Array {
  return sequence([encodeOid(oid), setOf([value])]);
}

function friendlyName(name: string): Uint8Array {
  const bytes = Buffer.alloc(name.length * 2);
  for (let i = 0; i < name.length; i++) bytes.writeUInt16BE(name.charCodeAt(i), i * 2);
  return attribute(OID.friendlyName, encodeTlv(Tag.BMP_STRING, bytes));
}

function safeBag(bagId: string, value: Uint8Array, attributes: Uint8Array[]): Uint8Array {
  return sequence([
    encodeOid(bagId),
    contextTag(0, value, true),
    ...(attributes.length > 0 ? [setOf(attributes)] : []),
  ]);
}

function certificateBag(certificate: X509Certificate, attributes: Uint8Array[]): Uint8Array {
  const value = sequence([
    encodeOid(OID.x509Certificate),
    contextTag(0, encodeOctetString(certificate.raw), true),
  ]);
  return safeBag(OID.certBag, value, attributes);
}

function plainSafe(bags: Uint8Array[]): Uint8Array {
  return sequence([encodeOid(OID.data), contextTag(0, encodeOctetString(sequence(bags)), true)]);
}

function encryptedSafe(
  bags: Uint8Array[],
  password: string,
  algorithms: ProfileAlgorithms,
): Uint8Array {
  const { algorithm, ciphertext } = pkcs12Encrypt(
    algorithms.certificates,
    password,
    sequence(bags),
    algorithms,
  );
  // EncryptedData { version 0, EncryptedContentInfo { data, algorithm, [0] IMPLICIT ciphertext } }.
  const encryptedData = sequence([
    encodeSmallInteger(0),
    sequence([encodeOid(OID.data), algorithm, contextTag(0, ciphertext, false)]),
  ]);
  return sequence([encodeOid(OID.encryptedData), contextTag(0, encryptedData, true)]);
}

function pfx(safes: Uint8Array[], password: string, algorithms: ProfileAlgorithms): Buffer {
  const authSafe = sequence(safes);
  const macData = pkcs12MacData(algorithms.mac, password, authSafe, {
    iterations: algorithms.macIterations,
    saltLength: algorithms.saltLength,
  });
  return Buffer.from(
    sequence([
      encodeSmallInteger(3),
      sequence([encodeOid(OID.data), contextTag(0, encodeOctetString(authSafe), true)]),
      macData,
    ]),
  );
}

/**
 * Encodes key and every certificate of chainPem (leaf first) as a password-protected PKCS#12
 * keystore with the profile's algorithms; RSA, ECDSA and Ed25519 keys.
 */
export async function encodePkcs12(
  key: KeyObject,
  chainPem: string,
  password: string,
  options: Pkcs12Options = {},
): Promise<Buffer> {
  const algorithms = profileAlgorithms(options.profile ?? 'Modern2023');
  if (key.type !== 'private') {
    throw new PkiError(`cannot create PKCS#12: a private key is required, got a ${key.type} key`);
  }
  let certificates: X509Certificate[];
  try {
    certificates = splitPemCertificates(chainPem);
  } catch (err) {
    throw new PkiError(`cannot create PKCS#12: ${(err as Error).message}`);
  }
  const [leaf, ...cas] = certificates;
  if (!leaf) throw new PkiError('cannot create PKCS#12: no certificates in chain');
  // Like `openssl pkcs12 -export`: a keystore whose key is not the leaf's is useless to readers.
  if (!publicKeysEqual(key, leaf.publicKey)) {
    throw new PkiError(
      'cannot create PKCS#12: the private key does not match the leaf certificate',
    );
  }
  // OpenSSL pairs key and leaf by the SHA-1 of the leaf's DER; readers match on it.
  const localKeyId = createHash('sha1').update(leaf.raw).digest();
  const keyAttributes = [attribute(OID.localKeyId, encodeOctetString(localKeyId))];
  if (options.friendlyName !== undefined) keyAttributes.push(friendlyName(options.friendlyName));

  const certificateBags = [
    certificateBag(leaf, keyAttributes),
    ...cas.map((ca) => certificateBag(ca, [])),
  ];
  const pkcs8 = key.export({ type: 'pkcs8', format: 'der' });
  const shrouded = pkcs12Encrypt(algorithms.key, password, pkcs8, algorithms);
  const keyBag = safeBag(
    OID.shroudedKeyBag,
    sequence([shrouded.algorithm, encodeOctetString(shrouded.ciphertext)]),
    keyAttributes,
  );
  return pfx(
    [encryptedSafe(certificateBags, password, algorithms), plainSafe([keyBag])],
    password,
    algorithms,
  );
}

/**
 * Encodes every certificate of caPem as a password-protected PKCS#12 Java truststore:
 * certificate bags only, each marked trusted for any purpose and named by its subject.
 */
export async function encodePkcs12TrustStore(
  caPem: string,
  password: string,
  options: Pkcs12TrustStoreOptions = {},
): Promise<Buffer> {
  const algorithms = profileAlgorithms(options.profile ?? 'Modern2023');
  let certificates: X509Certificate[];
  try {
    certificates = splitPemCertificates(caPem);
  } catch (err) {
    throw new PkiError(`cannot create PKCS#12 truststore: ${(err as Error).message}`);
  }
  if (certificates.length === 0) {
    throw new PkiError('cannot create PKCS#12 truststore: no certificates');
  }
  const trusted = attribute(OID.javaTrustedKeyUsage, encodeOid(OID.anyExtendedKeyUsage));
  // go-pkcs12's EncodeTrustStore names each entry by its subject (Go's pkix.Name.String());
  // certificates sharing a subject share an alias, and Java then keeps only one of them.
  const bags = certificates.map((certificate) => {
    const subject = describeSubject(readCertificateFields(certificate.raw).subjectDer);
    return certificateBag(certificate, [trusted, friendlyName(subject)]);
  });
  return pfx([encryptedSafe(bags, password, algorithms)], password, algorithms);
}
