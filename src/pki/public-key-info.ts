import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import {
  encodeBitString,
  encodeOid,
  encodeTlv,
  encodeUnsignedInteger,
  sequence,
  Tag,
} from './der.js';
import { safeJwkOf } from './jwk-export.js';
import { ED25519_ALGORITHM, ecPointOfJwk, jwkBytes } from './jwk-key-parts.js';

// SubjectPublicKeyInfo DER built from a key's JWK. OpenSSL 3's DER encoder for public keys costs
// ~100 µs per call here (a provider lookup each time), its JWK export ~10 µs: on a publish's path
// that is a tenth of the whole raw issuance, twice (the CSR and the certificate).

const RSA_ENCRYPTION = '1.2.840.113549.1.1.1';

// The SPKI DER of a public JWK of the kinds the product uses; undefined for any other kind.
function spkiOfJwk(jwk: JsonWebKey): Uint8Array | undefined {
  if (jwk.kty === 'EC') {
    const point = ecPointOfJwk(jwk);
    return point && Buffer.concat([point.form.prefix, point.x, point.y]);
  }
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') {
    return sequence([ED25519_ALGORITHM, encodeBitString(jwkBytes(jwk.x))]);
  }
  if (jwk.kty === 'RSA') {
    const rsaKey = sequence([
      encodeUnsignedInteger(jwkBytes(jwk.n)),
      encodeUnsignedInteger(jwkBytes(jwk.e)),
    ]);
    return sequence([
      sequence([encodeOid(RSA_ENCRYPTION), encodeTlv(Tag.NULL, new Uint8Array(0))]),
      encodeBitString(rsaKey),
    ]);
  }
  return undefined;
}

/** The SubjectPublicKeyInfo DER of a private or public key, byte for byte what OpenSSL writes. */
export function encodePublicKeyInfo(key: KeyObject): Buffer {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  // Kinds JWK has no form for (secp224r1, DSA), and keys not safe to export as JWK (see
  // jwk-export.ts): OpenSSL's encoder answers below.
  const jwk = safeJwkOf(pub, key);
  const built = jwk === undefined ? undefined : spkiOfJwk(jwk);
  return built === undefined ? pub.export({ type: 'spki', format: 'der' }) : Buffer.from(built);
}
