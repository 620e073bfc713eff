import type { JsonWebKey, KeyObject } from 'node:crypto';
import {
  contextTag,
  encodeBitString,
  encodeOctetString,
  encodeSmallInteger,
  sequence,
} from './der.js';
import { safeJwkOf } from './jwk-export.js';
import { ED25519_ALGORITHM, ecPointOfJwk, jwkBytes } from './jwk-key-parts.js';

// PKCS#8 PrivateKeyInfo DER built from a key's JWK. OpenSSL 3's PKCS#8 encoder costs ~50 µs per
// key here (a provider lookup each time), its JWK export ~5 µs; every issuance writes one key.

// The PrivateKeyInfo of a private JWK of the EC and Ed25519 kinds; undefined for any other.
function privateKeyInfoOfJwk(jwk: JsonWebKey): Uint8Array | undefined {
  if (jwk.kty === 'EC') {
    const point = ecPointOfJwk(jwk);
    const d = jwkBytes(jwk.d);
    // RFC 7518 6.2.2.1: d has the curve's full length too.
    if (!point || d.length !== point.form.coordinate) return undefined;
    const { form, x, y } = point;
    // RFC 5915 ECPrivateKey, as OpenSSL writes it inside PKCS#8: version 1, the scalar and the
    // public point, the curve left to the outer AlgorithmIdentifier.
    const ecPrivateKey = sequence([
      encodeSmallInteger(1),
      encodeOctetString(d),
      contextTag(1, encodeBitString(Buffer.concat([Buffer.of(0x04), x, y])), true),
    ]);
    return sequence([encodeSmallInteger(0), form.algorithm, encodeOctetString(ecPrivateKey)]);
  }
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') {
    const seed = jwkBytes(jwk.d);
    if (seed.length !== 32) return undefined;
    // RFC 8410: the CurvePrivateKey (an OCTET STRING) inside the privateKey OCTET STRING.
    return sequence([
      encodeSmallInteger(0),
      ED25519_ALGORITHM,
      encodeOctetString(encodeOctetString(seed)),
    ]);
  }
  return undefined;
}

/** The PKCS#8 PrivateKeyInfo DER of a private key, byte for byte what OpenSSL writes. */
export function encodePrivateKeyInfo(key: KeyObject): Buffer {
  const kind = key.asymmetricKeyType;
  // RSA keys are rare and slow to make anyway; JWK has no form for some kinds (secp224r1).
  const jwk = kind === 'ec' || kind === 'ed25519' ? safeJwkOf(key) : undefined;
  const built = jwk === undefined ? undefined : privateKeyInfoOfJwk(jwk);
  return built === undefined
    ? (key.export({ type: 'pkcs8', format: 'der' }) as Buffer)
    : Buffer.from(built);
}
