import type { KeyObject } from 'node:crypto';
import type { CertificateRequest } from '../api/certificate-request.js';
import type { Issuer } from '../api/issuer.js';
import { PRIVATE_KEY_SECRET_NAME_ANNOTATION } from '../api/labels.js';
import { secretValue, TLS_PRIVATE_KEY_KEY } from '../api/secret.js';
import { signCertificate } from '../pki/certificate.js';
import { decodePrivateKey, publicKeysEqual } from '../pki/keys.js';
import { isEmptyName } from '../pki/subject.js';
import { withCause } from './request-status.js';
import { type RequestTemplate, templateFromRequest } from './request-template.js';
import type { SignContext, Signer, SignOutcome } from './signer.js';

export const EMPTY_ISSUER_DN_WARNING =
  'Certificate will be issued with an empty Issuer DN, which contravenes RFC 5280 and could break some strict clients';

/**
 * The SelfSigned issuer's signer (reference §3.3): the key named by the request's
 * private-key-secret-name annotation, read from the request's own namespace, signs the
 * certificate, and ca.crt is the certificate itself. Without the annotation, a key held
 * by this process for the request (the embedded node plugin's) is used instead.
 */
export const signSelfSigned: Signer = async (request, issuer, context) => {
  const namespace = request.metadata.namespace ?? '';
  const secretName = request.metadata.annotations?.[PRIVATE_KEY_SECRET_NAME_ANNOTATION];
  const localKey = secretName
    ? undefined
    : context.privateKeyFor?.(namespace, request.metadata.name);
  if (localKey) return signWithKey(request, issuer, context, localKey);
  if (!secretName) {
    return {
      outcome: 'failed',
      reason: 'MissingAnnotation',
      message: withCause(
        `Annotation "${PRIVATE_KEY_SECRET_NAME_ANNOTATION}" missing or reference empty`,
        'secret name missing',
      ),
    };
  }
  const secret = context.secret(namespace, secretName);
  if (!secret) {
    return {
      outcome: 'pending',
      reason: 'MissingSecret',
      message: withCause(
        `Referenced secret ${namespace}/${secretName} not found`,
        `secrets "${secretName}" not found`,
      ),
    };
  }
  let key: KeyObject;
  try {
    key = decodePrivateKey(secretValue(secret, TLS_PRIVATE_KEY_KEY) ?? '');
  } catch (err) {
    return {
      outcome: 'pending',
      reason: 'ErrorParsingKey',
      message: withCause(
        `Failed to get key "${namespace}/${secretName}" referenced in annotation "${PRIVATE_KEY_SECRET_NAME_ANNOTATION}"`,
        err,
      ),
    };
  }
  return signWithKey(request, issuer, context, key);
};

async function signWithKey(
  request: CertificateRequest,
  issuer: Issuer,
  context: SignContext,
  key: KeyObject,
): Promise<SignOutcome> {
  let template: RequestTemplate;
  try {
    template = await templateFromRequest(request, issuer);
  } catch (err) {
    return {
      outcome: 'failed',
      reason: 'ErrorGenerating',
      message: withCause('Error generating certificate template', err),
    };
  }
  if (isEmptyName(template.csr.subjectDer)) {
    context.events.event(request, 'Warning', 'BadConfig', EMPTY_ISSUER_DN_WARNING);
  }
  if (!publicKeysEqual(key, template.csr.publicKey)) {
    return {
      outcome: 'failed',
      reason: 'ErrorKeyMatch',
      message: 'Error generating certificate template: CSR not signed by referenced private key',
    };
  }
  try {
    const pem = await signCertificate(
      template.csr,
      template.template,
      { selfSigned: key },
      context.now,
    );
    return { outcome: 'issued', certificatePem: pem, caPem: pem };
  } catch (err) {
    return {
      outcome: 'failed',
      reason: 'ErrorSigning',
      message: withCause('Error signing certificate', err),
    };
  }
}
