import { createHash, type KeyObject, webcrypto, type X509Certificate } from 'node:crypto';
import * as pkijs from 'pkijs';
import { splitPemCertificates } from './chain.js';
import {
  encodeOctetString,
  encodeOid,
  encodeTlv,
  sequence,
  setOf,
  Tag,
  toArrayBuffer,
} from './der.js';
import { PkiError } from './errors.js';
import { publicKeysEqual } from './keys.js';

// pkijs takes its WebCrypto from a global engine; pin it to Node's so the
// result never depends on what else set globalThis.crypto.
const engine = new pkijs.CryptoEngine({ name: 'node', crypto: webcrypto });
pkijs.setEngine('node', engine);

const OID = {
  certBag: '1.2.840.113549.1.12.10.1.3',
  shroudedKeyBag: '1.2.840.113549.1.12.10.1.2',
  friendlyName: '1.2.840.113549.1.9.20',
  localKeyId: '1.2.840.113549.1.9.21',
} as const;

/** OpenSSL 3's `pkcs12 -export` defaults: PBES2 with PBKDF2-HMAC-SHA256 and AES-256-CBC, SHA-256 MAC. */
const ITERATIONS = 2048;
const HASH = 'SHA-256';
const CIPHER = { name: 'AES-CBC', length: 256 };

/** Options of encodePkcs12. */
export interface Pkcs12Options {
  /** Alias of the key entry (friendlyName on key and leaf); Java shows it in `keytool -list`. */
  friendlyName?: string;
}

// Attributes are built as DER and parsed by pkijs, so this file needs no
// direct dependency on asn1js (pkijs' own ASN.1 library).
function attribute(oid: string, value: Uint8Array): pkijs.Attribute {
  const der = sequence([encodeOid(oid), setOf([value])]);
  return pkijs.Attribute.fromBER(der);
}

function bmpString(text: string): Uint8Array {
  const bytes = Buffer.alloc(text.length * 2);
  for (let i = 0; i < text.length; i++) bytes.writeUInt16BE(text.charCodeAt(i), i * 2);
  return encodeTlv(Tag.BMP_STRING, bytes);
}

function keyAttributes(
  localKeyId: Uint8Array,
  friendlyName: string | undefined,
): pkijs.Attribute[] {
  const attributes = [attribute(OID.localKeyId, encodeOctetString(localKeyId))];
  if (friendlyName !== undefined) {
    attributes.unshift(attribute(OID.friendlyName, bmpString(friendlyName)));
  }
  return attributes;
}

function encryptParams(password: ArrayBuffer) {
  return {
    password,
    contentEncryptionAlgorithm: CIPHER,
    hmacHashAlgorithm: HASH,
    iterationCount: ITERATIONS,
  };
}

/**
 * Encodes key and every certificate of chainPem (leaf first) as a password-protected PKCS#12
 * keystore with OpenSSL 3's modern profile; RSA, ECDSA and Ed25519 keys.
 */
export async function encodePkcs12(
  key: KeyObject,
  chainPem: string,
  password: string,
  options: Pkcs12Options = {},
): Promise<Buffer> {
  if (key.type !== 'private') {
    throw new PkiError(`cannot create PKCS#12: a private key is required, got a ${key.type} key`);
  }
  let certificates: X509Certificate[];
  try {
    certificates = splitPemCertificates(chainPem);
  } catch (err) {
    throw new PkiError(`cannot create PKCS#12: ${(err as Error).message}`);
  }
  const [leafCertificate] = certificates;
  if (!leafCertificate) throw new PkiError('cannot create PKCS#12: no certificates in chain');
  // Like `openssl pkcs12 -export`: a keystore whose key is not the leaf's is useless to readers.
  if (!publicKeysEqual(key, leafCertificate.publicKey)) {
    throw new PkiError(
      'cannot create PKCS#12: the private key does not match the leaf certificate',
    );
  }
  const ders = certificates.map((c) => c.raw);
  const leaf = leafCertificate.raw;

  // OpenSSL pairs key and leaf by the SHA-1 of the leaf's DER; readers match on it.
  const localKeyId = createHash('sha1').update(leaf).digest();
  const certBags = ders.map(
    (der, i) =>
      new pkijs.SafeBag({
        bagId: OID.certBag,
        bagValue: new pkijs.CertBag({ parsedValue: pkijs.Certificate.fromBER(der) }),
        ...(i === 0 ? { bagAttributes: keyAttributes(localKeyId, options.friendlyName) } : {}),
      }),
  );
  const pkcs8 = key.export({ type: 'pkcs8', format: 'der' });
  const keyBag = new pkijs.PKCS8ShroudedKeyBag({
    parsedValue: pkijs.PrivateKeyInfo.fromBER(pkcs8),
  });
  // PBES2 takes the password as UTF-8 bytes; pkijs turns them into the BMPString the MAC KDF wants.
  const passwordBytes = toArrayBuffer(new TextEncoder().encode(password));
  await keyBag.makeInternalValues(encryptParams(passwordBytes), engine);

  const authenticatedSafe = new pkijs.AuthenticatedSafe({
    parsedValue: {
      safeContents: [
        // Like OpenSSL: certificates in an encrypted safe, the already shrouded key in a plain one.
        { privacyMode: 1, value: new pkijs.SafeContents({ safeBags: certBags }) },
        {
          privacyMode: 0,
          value: new pkijs.SafeContents({
            safeBags: [
              new pkijs.SafeBag({
                bagId: OID.shroudedKeyBag,
                bagValue: keyBag,
                bagAttributes: keyAttributes(localKeyId, options.friendlyName),
              }),
            ],
          }),
        },
      ],
    },
  });
  await authenticatedSafe.makeInternalValues(
    { safeContents: [encryptParams(passwordBytes), {}] },
    engine,
  );
  const pfx = new pkijs.PFX({ parsedValue: { integrityMode: 0, authenticatedSafe } });
  await pfx.makeInternalValues(
    {
      password: passwordBytes,
      iterations: ITERATIONS,
      pbkdf2HashAlgorithm: HASH,
      hmacHashAlgorithm: HASH,
    },
    engine,
  );
  return Buffer.from(pfx.toSchema().toBER(false));
}
