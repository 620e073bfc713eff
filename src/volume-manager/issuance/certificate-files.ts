import { type KeyObject, X509Certificate } from 'node:crypto';
import { type CertificateRequest, decodeBytes } from '../../api/certificate-request.js';
import type { VolumeCertificateSpec } from '../../api/volume-spec.js';
import { errorMessage } from '../../base/error-message.js';
import { readCertificateFields, serialHex } from '../../pki/certificate-fields.js';
import { encodePrivateKey, spkiOf } from '../../pki/keys.js';
import { decodePemBlocks } from '../../pki/pem.js';
import { encodePkcs12 } from '../../pki/pkcs12.js';
import { renewalTime } from '../../pki/renewal-time.js';
import { nameProblem } from '../../pki/subject.js';
import { extraOutputFiles } from './extra-outputs.js';
import { type CertificateFacts, factsOfOpenssl } from './generation-file.js';
import { IssuanceError } from './issuance-error.js';

/** What one successful issuance produced. */
export interface IssuedCertificate {
  request: CertificateRequest;
  key: KeyObject;
  /** What the checks read of the certificate, for the generation file. */
  facts: CertificateFacts;
  files: Map<string, Uint8Array>;
  notBefore: Date;
  notAfter: Date;
  nextIssuanceTime: Date;
  /** When a request signed as it was created was asked for (an asynchronous one's is in metadata). */
  askedAt?: number;
}

/** What the checks of a returned certificate read of it. */
interface ReadLeaf {
  facts: CertificateFacts;
  subjectDer: Uint8Array;
  matchesKey: boolean;
}

// A certificate from any issuer is read by OpenSSL (what the pod's TLS stack will do with it).
function readForeignLeaf(certificatePem: string, key: KeyObject): ReadLeaf {
  const leaf = new X509Certificate(certificatePem);
  return {
    facts: factsOfOpenssl(leaf),
    subjectDer: readCertificateFields(leaf.raw).subjectDer,
    matchesKey: leaf.checkPrivateKey(key),
  };
}

// One this process encoded and signed a moment ago (local issuance) is read by the DER layer
// that wrote it: OpenSSL's X509Certificate costs ~0.15 ms, a fifth of a raw issuance.
function readOwnLeaf(certificatePem: string, key: KeyObject): ReadLeaf {
  const block = decodePemBlocks(certificatePem).find((b) => b.label === 'CERTIFICATE');
  if (!block) throw new Error('no CERTIFICATE block');
  const fields = readCertificateFields(block.der);
  return {
    facts: {
      serial: serialHex(fields.serialNumber),
      notBefore: fields.notBefore,
      notAfter: fields.notAfter,
    },
    subjectDer: fields.subjectDer,
    matchesKey: Buffer.from(fields.spkiDer).equals(spkiOf(key)),
  };
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
  /** Signed by this process as the request was created (LocalIssuer). */
  signedHere = false,
): Promise<IssuedCertificate> {
  const certificatePem = decodeBytes(request.status?.certificate) ?? '';
  const caPem = decodeBytes(request.status?.ca) ?? '';
  let leaf: ReadLeaf;
  try {
    leaf = signedHere ? readOwnLeaf(certificatePem, key) : readForeignLeaf(certificatePem, key);
    // The rule a literal subject met at publish: a subject other readers (Go's) refuse is as
    // unusable as one OpenSSL refuses.
    const subjectProblem = nameProblem(leaf.subjectDer);
    if (subjectProblem !== undefined) throw new Error(subjectProblem);
  } catch (err) {
    throw new IssuanceError(
      `request "${request.metadata.name}" returned an unreadable certificate: ${errorMessage(err)}`,
      'invalid-certificate',
    );
  }
  // An issuer that returns someone else's certificate must not break a working volume.
  if (!leaf.matchesKey) {
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
  const { notBefore, notAfter } = leaf.facts;
  return {
    request,
    key,
    facts: leaf.facts,
    files,
    notBefore,
    notAfter,
    nextIssuanceTime: renewalTime(notBefore, notAfter, spec.renewBeforeMs),
  };
}
