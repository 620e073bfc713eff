import type { KeyObject } from 'node:crypto';
import { secretValue, TLS_PRIVATE_KEY_KEY } from '../api/secret.js';
import { signCertificate } from '../pki/certificate.js';
import { decodePrivateKey, publicKeysEqual } from '../pki/keys.js';
import { isEmptyName } from '../pki/subject.js';
import { certificateTemplate } from './certificate-template.js';
import type { IssuerSigner } from './issuer-signer.js';
import type { SigningWarning } from './signing-outcome.js';
import type { SigningRequest } from './signing-request.js';

/**
 * The SelfSigned issuer's signer, in cert-manager's order: the key the request
 * names (none, Secret missing, unusable), the request, the key match, the signature. The
 * certificate is its own CA. An empty subject is signed with a warning, as cert-manager does.
 */
export const signSelfSigned: IssuerSigner = async (issuer, input, context) => {
  const reference = input.selfSignedKey;
  if (!reference) return { kind: 'keyNotReferenced' };
  let key: KeyObject;
  if ('key' in reference) {
    key = reference.key;
  } else {
    const { secret: secretRef } = reference;
    const secret = context.secret(secretRef.namespace, secretRef.name);
    if (!secret) return { kind: 'keySecretMissing', secret: secretRef };
    try {
      key = decodePrivateKey(secretValue(secret, TLS_PRIVATE_KEY_KEY) ?? '');
    } catch (cause) {
      return { kind: 'keySecretInvalid', secret: secretRef, cause };
    }
  }
  let request: SigningRequest;
  try {
    request = await input.read();
  } catch (cause) {
    return { kind: 'requestInvalid', cause };
  }
  const warnings: SigningWarning[] = isEmptyName(request.subject.subjectDer)
    ? ['emptyIssuerDn']
    : [];
  if (!publicKeysEqual(key, request.subject.publicKey)) return { kind: 'keyMismatch', warnings };
  try {
    const pem = await signCertificate(
      request.subject,
      certificateTemplate(request, issuer),
      { selfSigned: key },
      context.now,
    );
    return { kind: 'issued', chainPem: pem, caPem: pem, warnings };
  } catch (cause) {
    return { kind: 'signingFailed', cause, warnings };
  }
};
