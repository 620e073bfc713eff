import { createHash, type KeyObject } from 'node:crypto';
import { readCertificateFields } from './certificate-fields.js';
import type { ParsedCsr } from './csr.js';
import {
  asBytes,
  childrenOf,
  contentOf,
  contextTag,
  encodeSmallInteger,
  encodeTime,
  encodeUnsignedInteger,
  readSingle,
  sequence,
  Tag,
} from './der.js';
import { PkiError } from './errors.js';
import {
  decodeSubjectKeyIdentifier,
  ExtensionOid,
  encodeAuthorityInfoAccess,
  encodeAuthorityKeyIdentifier,
  encodeBasicConstraints,
  encodeCrlDistributionPoints,
  encodeExtension,
  encodeExtKeyUsage,
  encodeKeyUsage,
  encodeSubjectKeyIdentifier,
  type RawExtension,
} from './extensions.js';
import { rememberIssued } from './issued-here.js';
import {
  publicKeysEqual,
  requirePrivate,
  type SigningAlgorithm,
  signingAlgorithmFor,
  spkiOf,
} from './keys.js';
import { decodePemBlocks, encodePem } from './pem.js';
import { pooledRandomBytes } from './random-pool.js';
import { algorithmIdentifierOf, signedStructure } from './signing.js';
import { isEmptyName, nameProblem, subjectToDer } from './subject.js';
import { usagesToExtensions } from './usages.js';

/** What the issuer decides about a certificate, beyond what the CSR says. */
export interface CertificateTemplate {
  durationMs: number;
  isCA: boolean;
  usages: readonly string[];
  /**
   * Whether isCA adds `cert sign` to the key usage: cert-manager does so for its
   * CertificateRequests, not for Kubernetes CertificateSigningRequests. Default true.
   */
  certSignForCA?: boolean;
  crlDistributionPoints?: string[];
  ocspServers?: string[];
  issuingCertificateURLs?: string[];
  /** The latest notAfter allowed (a CA's own notAfter, for pod certificates); none by default. */
  notAfterLimit?: Date;
}

/** A CA signer: its certificate PEM (the first certificate is the signer) and private key. */
export interface SignerKeyPair {
  certificatePem: string;
  key: KeyObject;
}

/** Everything needed to sign one certificate; both the CSR path and the CA bootstrap build this. */
interface IssueInput {
  subjectDer: Uint8Array;
  spkiDer: Uint8Array;
  issuerDer: Uint8Array;
  authorityKeyId: Uint8Array;
  signingKey: KeyObject;
  /** The signer's algorithm, when a prepared signer already chose it. */
  signingAlgorithm?: SigningAlgorithm;
  template: CertificateTemplate;
  sanExtension?: { critical: boolean; der: ArrayBuffer } | undefined;
  nameConstraints?: { critical: boolean; der: ArrayBuffer } | undefined;
  now: Date;
}

/** RFC 5280 4.2.1.2 method 1: SHA-1 of the subjectPublicKey BIT STRING contents (what Go and OpenSSL use). */
export function subjectKeyIdOf(spkiDer: Uint8Array): Uint8Array {
  const [, bitString] = childrenOf(
    spkiDer,
    readSingle(spkiDer),
    Tag.SEQUENCE,
    'SubjectPublicKeyInfo',
  );
  if (bitString?.tag !== Tag.BIT_STRING) throw new PkiError('malformed DER: bad public key');
  // The first content byte counts unused bits; the key itself follows.
  const keyBits = contentOf(spkiDer, bitString).subarray(1);
  return new Uint8Array(createHash('sha1').update(keyBits).digest());
}

/** A random positive serial like Go's x509.CreateCertificate: 20 bytes with the top bit cleared, never zero. */
export function randomSerialNumber(random: (size: number) => Buffer = pooledRandomBytes): string {
  for (;;) {
    const bytes = random(20);
    bytes.writeUInt8(bytes.readUInt8(0) & 0x7f, 0);
    if (bytes.some((b) => b !== 0)) return bytes.toString('hex');
  }
}

// Order follows Go's buildCertExtensions: KU, EKU, BC, SKI, AKI, AIA, SAN, NC, CRL DP.
function buildExtensions(input: IssueInput): RawExtension[] {
  const { template } = input;
  const { keyUsage, extKeyUsages } = usagesToExtensions(
    template.usages,
    template.isCA && template.certSignForCA !== false,
  );
  const exts: RawExtension[] = [];
  if (keyUsage !== 0)
    exts.push({ oid: ExtensionOid.keyUsage, critical: true, value: encodeKeyUsage(keyUsage) });
  if (extKeyUsages.length > 0) {
    exts.push({
      oid: ExtensionOid.extKeyUsage,
      critical: false,
      value: encodeExtKeyUsage(extKeyUsages),
    });
  }
  exts.push({
    oid: ExtensionOid.basicConstraints,
    critical: true,
    value: encodeBasicConstraints(template.isCA),
  });
  exts.push({
    oid: ExtensionOid.subjectKeyIdentifier,
    critical: false,
    value: encodeSubjectKeyIdentifier(subjectKeyIdOf(input.spkiDer)),
  });
  exts.push({
    oid: ExtensionOid.authorityKeyIdentifier,
    critical: false,
    value: encodeAuthorityKeyIdentifier(input.authorityKeyId),
  });
  const ocsp = template.ocspServers ?? [];
  const caIssuers = template.issuingCertificateURLs ?? [];
  if (ocsp.length > 0 || caIssuers.length > 0) {
    exts.push({
      oid: ExtensionOid.authorityInfoAccess,
      critical: false,
      value: encodeAuthorityInfoAccess(ocsp, caIssuers),
    });
  }
  if (input.sanExtension) {
    // Copied raw so names we do not model (otherName, ...) survive; critical iff the subject is empty (RFC 5280 4.2.1.6).
    exts.push({
      oid: ExtensionOid.subjectAltName,
      critical: isEmptyName(input.subjectDer),
      value: asBytes(input.sanExtension.der),
    });
  }
  if (input.nameConstraints) {
    exts.push({
      oid: ExtensionOid.nameConstraints,
      critical: input.nameConstraints.critical,
      value: asBytes(input.nameConstraints.der),
    });
  }
  const crl = template.crlDistributionPoints ?? [];
  if (crl.length > 0) {
    exts.push({
      oid: ExtensionOid.crlDistributionPoints,
      critical: false,
      value: encodeCrlDistributionPoints(crl),
    });
  }
  return exts;
}

const VERSION_3 = contextTag(0, encodeSmallInteger(2), true);

function issue(input: IssueInput): string {
  const { durationMs } = input.template;
  if (!Number.isFinite(durationMs) || durationMs <= 0) {
    throw new PkiError(`certificate duration must be positive, got ${durationMs} ms`);
  }
  // A subject some reader refuses would make a certificate nobody can use (readable-name.ts).
  const subjectProblem = nameProblem(input.subjectDer);
  if (subjectProblem !== undefined) {
    throw new PkiError(`the subject cannot be put in a certificate: ${subjectProblem}`);
  }
  requirePrivate(input.signingKey);
  const signingAlgorithm =
    input.signingAlgorithm ?? signingAlgorithmFor(input.signingKey, 'certificate');
  const algorithmIdentifier = algorithmIdentifierOf(signingAlgorithm);
  // No backdating, like cert-manager; DER times have whole seconds.
  const notAfter = new Date(
    Math.min(
      input.now.getTime() + durationMs,
      input.template.notAfterLimit?.getTime() ?? Number.POSITIVE_INFINITY,
    ),
  );
  // RFC 5280 4.1: TBSCertificate, v3, in its field order.
  const tbs = sequence([
    VERSION_3,
    encodeUnsignedInteger(Buffer.from(randomSerialNumber(), 'hex')),
    algorithmIdentifier,
    input.issuerDer,
    sequence([encodeTime(input.now), encodeTime(notAfter)]),
    input.subjectDer,
    input.spkiDer,
    contextTag(3, sequence(buildExtensions(input).map(encodeExtension)), true),
  ]);
  const der = signedStructure(tbs, input.signingKey, signingAlgorithm);
  rememberIssued(der);
  return encodePem('CERTIFICATE', der);
}

function signerFields(signer: SignerKeyPair): {
  issuerDer: Uint8Array;
  authorityKeyId: Uint8Array;
} {
  const first = decodePemBlocks(signer.certificatePem).find((b) => b.label === 'CERTIFICATE');
  if (!first) throw new PkiError('signer certificate PEM holds no certificate');
  const fields = readCertificateFields(first.der);
  if (!spkiOf(signer.key).equals(fields.spkiDer)) {
    throw new PkiError('signer private key does not match the signer certificate');
  }
  const ski = fields.extensions.get(ExtensionOid.subjectKeyIdentifier);
  return {
    issuerDer: fields.subjectDer,
    // Without an SKI on the signer there is nothing to copy; derive it the same way instead.
    authorityKeyId: ski ? decodeSubjectKeyIdentifier(ski.value) : subjectKeyIdOf(fields.spkiDer),
  };
}

/** A CA signer whose certificate is read and whose key is checked once, for many signatures. */
export interface PreparedSigner {
  readonly prepared: true;
  readonly issuerDer: Uint8Array;
  readonly authorityKeyId: Uint8Array;
  readonly signingKey: KeyObject;
  readonly signingAlgorithm: SigningAlgorithm;
}

/**
 * Checks a CA key pair and does the per-signer work up front: parsing the certificate and
 * comparing its key cost more than the signature itself (measured in bench/publish.ts).
 */
export async function prepareSigner(signer: SignerKeyPair): Promise<PreparedSigner> {
  const fields = signerFields(signer);
  return {
    prepared: true,
    ...fields,
    signingKey: signer.key,
    signingAlgorithm: signingAlgorithmFor(signer.key, 'certificate'),
  };
}

/**
 * What a certificate takes from the request, whichever API carried it: the public key, the
 * subject and the SAN and NameConstraints extensions (as raw DER, so names we do not model
 * survive). A ParsedCsr is one. spkiDer, when given, must be publicKey's SubjectPublicKeyInfo
 * as the request encoded it: it is copied as it is instead of exporting the key again.
 */
export type CertificateSubject = Pick<
  ParsedCsr,
  'subjectDer' | 'publicKey' | 'sanExtension' | 'nameConstraints'
> & { spkiDer?: ArrayBuffer | Uint8Array };

/** Signs a leaf like cert-manager's CA and SelfSigned issuers; returns the leaf PEM. */
export async function signCertificate(
  csr: CertificateSubject,
  template: CertificateTemplate,
  signer: SignerKeyPair | PreparedSigner | { selfSigned: KeyObject },
  now: Date = new Date(),
): Promise<string> {
  const subjectDer = asBytes(csr.subjectDer);
  // Exporting the key again cost as much as the signature (bench/sign.ts profile).
  const spkiDer = csr.spkiDer ? asBytes(csr.spkiDer) : new Uint8Array(spkiOf(csr.publicKey));
  let signing: {
    issuerDer: Uint8Array;
    authorityKeyId: Uint8Array;
    signingKey: KeyObject;
    signingAlgorithm?: SigningAlgorithm;
  };
  if ('selfSigned' in signer) {
    if (!publicKeysEqual(signer.selfSigned, csr.publicKey)) {
      throw new PkiError('CSR not signed by referenced private key');
    }
    signing = {
      issuerDer: subjectDer,
      authorityKeyId: subjectKeyIdOf(spkiDer),
      signingKey: signer.selfSigned,
    };
  } else if ('prepared' in signer) {
    signing = signer;
  } else {
    signing = { ...signerFields(signer), signingKey: signer.key };
  }
  return issue({
    issuerDer: signing.issuerDer,
    authorityKeyId: signing.authorityKeyId,
    signingKey: signing.signingKey,
    ...(signing.signingAlgorithm ? { signingAlgorithm: signing.signingAlgorithm } : {}),
    subjectDer,
    spkiDer,
    template,
    sanExtension: csr.sanExtension,
    nameConstraints: csr.nameConstraints,
    now,
  });
}

/** Creates a self-signed CA certificate (CA:TRUE; cert sign, CRL sign, digital signature) for the embedded CA and tests. */
export async function createSelfSignedCa(opts: {
  key: KeyObject;
  commonName: string;
  durationMs: number;
  now?: Date;
}): Promise<string> {
  const subjectDer = new Uint8Array(subjectToDer({ commonName: opts.commonName }));
  const spkiDer = new Uint8Array(spkiOf(opts.key));
  return issue({
    subjectDer,
    spkiDer,
    issuerDer: subjectDer,
    authorityKeyId: subjectKeyIdOf(spkiDer),
    signingKey: opts.key,
    template: {
      durationMs: opts.durationMs,
      isCA: true,
      usages: ['digital signature', 'cert sign', 'crl sign'],
    },
    now: opts.now ?? new Date(),
  });
}
