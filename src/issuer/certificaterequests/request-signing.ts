import type { KeyObject } from 'node:crypto';
import { type CertificateRequest, decodeBytes } from '../../api/certificate-request.js';
import { quoted } from '../../api/echoed-value.js';
import { PRIVATE_KEY_SECRET_NAME_ANNOTATION } from '../../api/labels.js';
import { parseCsr } from '../../pki/csr.js';
import { parseGoDuration } from '../../pki/duration.js';
import { isKnownUsage } from '../../pki/usages.js';
import { DEFAULT_DURATION_MS } from '../certificate-template.js';
import type { SigningInput, SigningRequest } from '../signing-request.js';

/**
 * What a CertificateRequest asks an issuer to sign: its CSR (signature checked), lifetime
 * (`spec.duration`, default 90 days), CA flag and usages, and for SelfSigned the key Secret its
 * `cert-manager.io/private-key-secret-name` annotation names in its own namespace, or else a
 * key this process holds for it.
 */
export function signingInputOf(
  request: CertificateRequest,
  privateKeyFor?: (namespace: string, name: string) => KeyObject | undefined,
): SigningInput {
  const namespace = request.metadata.namespace ?? '';
  const secretName = request.metadata.annotations?.[PRIVATE_KEY_SECRET_NAME_ANNOTATION];
  const localKey = secretName ? undefined : privateKeyFor?.(namespace, request.metadata.name);
  return {
    read: () => signingRequestOf(request),
    ...(localKey
      ? { selfSignedKey: { key: localKey } }
      : secretName
        ? { selfSignedKey: { secret: { namespace, name: secretName } } }
        : {}),
  };
}

/** Reads a CertificateRequest's fields; throws when it cannot be signed as written. */
async function signingRequestOf(request: CertificateRequest): Promise<SigningRequest> {
  const csr = await parseCsr(decodeBytes(request.spec.request) ?? '');
  const durationMs =
    request.spec.duration === undefined
      ? DEFAULT_DURATION_MS
      : parseGoDuration(request.spec.duration);
  if (!(durationMs > 0)) {
    throw new Error(`spec.duration must be positive, got ${quoted(request.spec.duration ?? '')}`);
  }
  const unknown = (request.spec.usages ?? []).filter((usage) => !isKnownUsage(usage));
  if (unknown.length > 0) {
    throw new Error(`unknown key usages: ${unknown.map(quoted).join(', ')}`);
  }
  return {
    subject: csr,
    durationMs,
    isCA: request.spec.isCA === true,
    usages: request.spec.usages ?? [],
    certSignForCA: true,
  };
}
