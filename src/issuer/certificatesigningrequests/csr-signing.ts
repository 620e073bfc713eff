import { decodeBytes } from '../../api/certificate-request.js';
import {
  type CertificateSigningRequest,
  CSR_PRIVATE_KEY_SECRET_ANNOTATION,
} from '../../api/certificate-signing-request.js';
import { parseCsr } from '../../pki/csr.js';
import { isKnownUsage } from '../../pki/usages.js';
import type { SigningInput } from '../signing-request.js';

/**
 * What a CSR asks an issuer to sign: its PKCS#10 request (signature checked), the lifetime and
 * CA flag the plan decided, and its usages. certificates.k8s.io spells the 23 usages exactly
 * as cert-manager does, so they are passed on as they are (an empty list means digital
 * signature and key encipherment); isCA does not add `cert sign` (cert-manager's
 * BuildKeyUsagesKube). For SelfSigned, the key is the Secret the
 * `experimental.cert-manager.io/private-key-secret-name` annotation names in the issuer's
 * resource namespace.
 */
export function csrSigningInput(
  csr: CertificateSigningRequest,
  options: { durationMs: number; isCA: boolean; keyNamespace: string },
): SigningInput {
  const secretName = csr.metadata.annotations?.[CSR_PRIVATE_KEY_SECRET_ANNOTATION];
  return {
    async read() {
      const subject = await parseCsr(decodeBytes(csr.spec.request) ?? '');
      const usages = csr.spec.usages ?? [];
      const unknown = usages.filter((usage) => !isKnownUsage(usage));
      // Go's %v of the list, as cert-manager's error says it.
      if (unknown.length > 0) throw new Error(`unknown key usages: [${unknown.join(' ')}]`);
      return {
        subject,
        durationMs: options.durationMs,
        isCA: options.isCA,
        usages,
        certSignForCA: false,
      };
    },
    ...(secretName
      ? { selfSignedKey: { secret: { namespace: options.keyNamespace, name: secretName } } }
      : {}),
  };
}
