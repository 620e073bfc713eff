import type { JsonWebKey } from 'node:crypto';
import { EC_SPKI_FORMS } from './ec-spki-forms.js';

// The parts of a key's JWK that the DER encoders of its public (public-key-info.ts) and private
// (private-key-info.ts) forms both read.

/** Ed25519's AlgorithmIdentifier: SEQUENCE { id-Ed25519 }, no parameters (RFC 8410). */
export const ED25519_ALGORITHM = Buffer.from('300506032b6570', 'hex');

/** A JWK member's bytes (base64url); empty when the member is absent. */
export function jwkBytes(text: string | undefined): Buffer {
  return Buffer.from(text ?? '', 'base64url');
}

/**
 * An EC JWK's curve form and point, when the curve is one of EC_SPKI_FORMS and x and y have its
 * full length (RFC 7518 6.2.1.2 says they always do; the uncompressed point needs it).
 */
export function ecPointOfJwk(
  jwk: JsonWebKey,
): { form: (typeof EC_SPKI_FORMS)[number]; x: Buffer; y: Buffer } | undefined {
  const form = EC_SPKI_FORMS.find((f) => f.crv === jwk.crv);
  const x = jwkBytes(jwk.x);
  const y = jwkBytes(jwk.y);
  if (!form || x.length !== form.coordinate || y.length !== form.coordinate) return undefined;
  return { form, x, y };
}
