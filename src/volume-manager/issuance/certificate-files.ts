import { type KeyObject, X509Certificate } from 'node:crypto';
import { type CertificateRequest, decodeBytes } from '../../api/certificate-request.js';
import type { VolumeCertificateSpec } from '../../api/volume-spec.js';
import { errorMessage } from '../../base/error-message.js';
import { readCertificateFields } from '../../pki/certificate-fields.js';
import { encodePrivateKey } from '../../pki/keys.js';
import { encodePkcs12 } from '../../pki/pkcs12.js';
import { renewalTime } from '../../pki/renewal-time.js';
import { nameProblem } from '../../pki/subject.js';
import { extraOutputFiles } from './extra-outputs.js';
import { IssuanceError } from './issuance-error.js';

/** What one successful issuance produced. */
export interface IssuedCertificate {
  request: CertificateRequest;
  key: KeyObject;
  /** The certificate, parsed once for the checks and the generation file. */
  leaf: X509Certificate;
  files: Map<string, Uint8Array>;
  notBefore: Date;
  notAfter: Date;
  nextIssuanceTime: Date;
  /** When a request signed as it was created was asked for (an asynchronous one's is in metadata). */
  askedAt?: number;
}

/**
 * Builds the volume's files from an issued request, after checking the pair matches: key,
 * certificate, CA and the extra outputs the spec asks for (PKCS#12, combined PEM, JKS).
 */
export async function certificateFiles(
  request: CertificateRequest,
  key: KeyObject,
  spec: VolumeCertificateSpec,
  /** The time the keystores are dated with (the manager's clock). */
  now: Date,
): Promise<IssuedCertificate> {
  const certificatePem = decodeBytes(request.status?.certificate) ?? '';
  const caPem = decodeBytes(request.status?.ca) ?? '';
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(certificatePem);
    // The rule a literal subject met at publish: a subject other readers (Go's) refuse is as
    // unusable as one OpenSSL refuses.
    const subjectProblem = nameProblem(readCertificateFields(leaf.raw).subjectDer);
    if (subjectProblem !== undefined) throw new Error(subjectProblem);
  } catch (err) {
    throw new IssuanceError(
      `request "${request.metadata.name}" returned an unreadable certificate: ${errorMessage(err)}`,
      'invalid-certificate',
    );
  }
  // An issuer that returns someone else's certificate must not break a working volume.
  if (!leaf.checkPrivateKey(key)) {
    throw new IssuanceError(
      `request "${request.metadata.name}" returned a certificate that does not match the private key`,
      'invalid-certificate',
    );
  }
  const keyPem = encodePrivateKey(key, spec.key.encoding);
  const files = new Map<string, Uint8Array>([
    [spec.files.privateKey, Buffer.from(keyPem)],
    [spec.files.certificate, Buffer.from(certificatePem)],
    [spec.files.ca, Buffer.from(caPem)],
  ]);
  if (spec.files.pkcs12) {
    files.set(
      spec.files.pkcs12.filename,
      await encodePkcs12(key, certificatePem, spec.files.pkcs12.password),
    );
  }
  try {
    // A volume's trust bundle is read under its lock when the files are written: its JKS
    // stores are built there (TrustBundleVolumes.withBundle), not from the request's CA.
    const { jks: _fromTheBundle, ...withoutJks } = spec.files;
    const outputs = spec.trustBundle ? withoutJks : spec.files;
    const extra = { files: outputs, key, keyPem, certificatePem, caPem, now };
    for (const [name, data] of extraOutputFiles(extra)) files.set(name, data);
  } catch (err) {
    throw new IssuanceError(
      `request "${request.metadata.name}" returned a certificate or CA that cannot go into the volume's keystore: ${errorMessage(err)}`,
      'invalid-certificate',
    );
  }
  const notBefore = new Date(leaf.validFrom);
  const notAfter = new Date(leaf.validTo);
  return {
    request,
    key,
    leaf,
    files,
    notBefore,
    notAfter,
    nextIssuanceTime: renewalTime(notBefore, notAfter, spec.renewBeforeMs),
  };
}
