import { createPublicKey, KeyObject } from 'node:crypto';
import type { NameConstraints } from '../api/certificate.js';
import type { ErrorKind } from '../base/error-catalogue.js';
import {
  csrSignatureProblem,
  type SignedRequest,
  UNSUPPORTED_SIGNATURE_ALGORITHM,
} from './csr-signature.js';
import {
  asBytes,
  childrenOf,
  concat,
  contentOf,
  contextTag,
  decodeOid,
  encodeOid,
  encodeSmallInteger,
  rawOf,
  readSingle,
  sequence,
  setOf,
  Tag,
  type Tlv,
  toArrayBuffer,
} from './der.js';
import { PkiError } from './errors.js';
import {
  decodeBasicConstraints,
  decodeExtensions,
  decodeExtKeyUsage,
  decodeKeyUsage,
  ExtensionOid,
  encodeExtension,
  encodeExtKeyUsage,
  encodeKeyUsage,
  type RawExtension,
} from './extensions.js';
import { requirePrivate, signingAlgorithmFor, spkiOf } from './keys.js';
import { encodeNameConstraints } from './name-constraints.js';
import { decodePemBlocks, encodePem, pemText } from './pem.js';
import { RecentResults } from './recent-results.js';
import {
  decodeSubjectAltNames,
  encodeSubjectAltNames,
  hasSubjectAltNames,
  type SubjectAltNames,
  type Utf8OtherName,
} from './san.js';
import { namedSigningAlgorithm } from './signature-algorithm.js';
import { signedStructure } from './signing.js';
import { publicKeyFromSpki } from './spki-import.js';
import {
  describeSubject,
  parseLiteralSubject,
  type SubjectFields,
  subjectToDer,
} from './subject.js';
import { usagesToExtensions } from './usages.js';

/** What goes into a CSR; a non-empty literalSubject replaces subject entirely. */
export interface CsrRequest {
  key: KeyObject;
  subject?: SubjectFields;
  literalSubject?: string;
  dnsNames?: string[];
  ipAddresses?: string[];
  uris?: string[];
  emailAddresses?: string[];
  /** otherName SANs with UTF8String values, after the other SANs (cert-manager's order). */
  otherNames?: readonly Utf8OtherName[];
  /** A NameConstraints extension, critical as it says; none when it holds no entry. */
  nameConstraints?: NameConstraints;
  /** cert-manager's signature algorithm name (e.g. SHA384WithRSA); the key's default when unset. */
  signatureAlgorithm?: string;
  /** KeyUsage (critical) and ExtendedKeyUsage extensions from usage names, as cert-manager encodes a Certificate's usages (empty: the defaults; isCA adds cert sign). */
  usages?: { names: readonly string[]; isCA: boolean };
}

/** A verified CSR with the parts an issuer copies into the certificate. */
export interface ParsedCsr {
  pem: string;
  subjectDer: ArrayBuffer;
  subject: string;
  publicKey: KeyObject;
  /** The SubjectPublicKeyInfo as the request encodes it (what publicKey was read from). */
  spkiDer: ArrayBuffer;
  sans: SubjectAltNames;
  sanExtension?: { critical: boolean; der: ArrayBuffer };
  basicConstraints?: { isCA: boolean };
  /** KeyUsage bit flags as in @peculiar/x509 KeyUsageFlags. */
  keyUsage?: number;
  /** ExtendedKeyUsage OIDs. */
  extKeyUsages?: string[];
  nameConstraints?: { critical: boolean; der: ArrayBuffer };
}

const EXTENSION_REQUEST = '1.2.840.113549.1.9.14';
const EXTENSION_REQUEST_OID = encodeOid(EXTENSION_REQUEST);
const VERSION_1 = encodeSmallInteger(0);

/** A request whose self-signature does not verify; reason is Go's CheckSignature text. */
export class CsrSignatureError extends PkiError {
  constructor(
    message: string,
    readonly reason: string,
  ) {
    super(message);
  }

  override get errorKind(): ErrorKind {
    return 'CERT_CSI_CSR_SIGNATURE_INVALID';
  }
}

/**
 * Creates a PEM `CERTIFICATE REQUEST` like cert-manager's GenerateCSR: the SAN extension
 * (omitted when there are no SANs), the usages when asked, then NameConstraints.
 */
export async function createCsr(req: CsrRequest): Promise<string> {
  return createCsrSync(req);
}

/** createCsr, synchronously: the key is a KeyObject and node:crypto signs on this thread. */
export function createCsrSync(req: CsrRequest): string {
  const subjectDer = req.literalSubject
    ? parseLiteralSubject(req.literalSubject)
    : subjectToDer(req.subject ?? {});
  const extensions: RawExtension[] = hasSubjectAltNames(req)
    ? [
        {
          oid: ExtensionOid.subjectAltName,
          critical: false,
          value: asBytes(encodeSubjectAltNames(req)),
        },
      ]
    : [];
  if (req.usages) {
    const { keyUsage, extKeyUsages } = usagesToExtensions(req.usages.names, req.usages.isCA);
    extensions.push({
      oid: ExtensionOid.keyUsage,
      critical: true,
      value: encodeKeyUsage(keyUsage),
    });
    if (extKeyUsages.length > 0)
      extensions.push({
        oid: ExtensionOid.extKeyUsage,
        critical: false,
        value: encodeExtKeyUsage(extKeyUsages),
      });
  }
  const nameConstraints = req.nameConstraints && encodeNameConstraints(req.nameConstraints);
  if (nameConstraints)
    extensions.push({
      oid: ExtensionOid.nameConstraints,
      critical: req.nameConstraints?.critical ?? false,
      value: nameConstraints,
    });
  const signingAlgorithm = req.signatureAlgorithm
    ? namedSigningAlgorithm(req.key, req.signatureAlgorithm)
    : signingAlgorithmFor(req.key, 'csr');
  requirePrivate(req.key);
  // RFC 2986 4.1: version 0, the subject, the key, and the attributes [0] IMPLICIT: one
  // extensionRequest holding the extensions, or an empty set.
  const attributes =
    extensions.length > 0
      ? [sequence([EXTENSION_REQUEST_OID, setOf([sequence(extensions.map(encodeExtension))])])]
      : [];
  const info = sequence([
    VERSION_1,
    asBytes(subjectDer),
    spkiOf(req.key),
    contextTag(0, concat(attributes), true),
  ]);
  const pem = encodePem('CERTIFICATE REQUEST', signedStructure(info, req.key, signingAlgorithm));
  madeHere.set(pem, createPublicKey(req.key));
  return pem;
}

function requestedExtensions(
  buf: Uint8Array,
  attributes: Tlv | undefined,
): Map<string, RawExtension> {
  const out = new Map<string, RawExtension>();
  if (!attributes) return out;
  for (const attr of childrenOf(buf, attributes, 0xa0, 'attributes')) {
    const [type, values] = childrenOf(buf, attr, Tag.SEQUENCE, 'attribute');
    if (type?.tag !== Tag.OID || !values) throw new PkiError('malformed DER: bad attribute');
    if (decodeOid(contentOf(buf, type)) !== EXTENSION_REQUEST) continue;
    for (const list of childrenOf(buf, values, Tag.SET, 'attribute values')) {
      for (const [oid, ext] of decodeExtensions(buf, list)) {
        if (out.has(oid)) throw new PkiError(`duplicate extension ${oid}`);
        out.set(oid, ext);
      }
    }
  }
  return out;
}

function csrDer(pem: string | Buffer): Uint8Array {
  const block = decodePemBlocks(pemText(pem))[0];
  if (!block) throw new PkiError('no PEM block found');
  if (block.label !== 'CERTIFICATE REQUEST' && block.label !== 'NEW CERTIFICATE REQUEST') {
    throw new PkiError(`unexpected PEM block "${block.label}"`);
  }
  return block.der;
}

function parseStructure(
  der: Uint8Array,
  /** The request's key when known (a request made here): not imported again from the DER. */
  knownKey?: KeyObject,
): Omit<ParsedCsr, 'pem'> & {
  signed: Omit<SignedRequest, 'publicKey'>;
} {
  const [info, sigAlg, signature, extra] = childrenOf(der, readSingle(der), Tag.SEQUENCE, 'CSR');
  if (!info || !sigAlg || signature?.tag !== Tag.BIT_STRING || extra) {
    throw new PkiError('malformed DER: bad CertificationRequest');
  }
  const [version, subject, spki, attributes] = childrenOf(der, info, Tag.SEQUENCE, 'CSR info');
  if (version?.tag !== Tag.INTEGER || subject?.tag !== Tag.SEQUENCE || spki?.tag !== Tag.SEQUENCE) {
    throw new PkiError('malformed DER: bad CertificationRequestInfo');
  }
  const [sigOid, sigParams] = childrenOf(der, sigAlg, Tag.SEQUENCE, 'signature algorithm');
  if (sigOid?.tag !== Tag.OID) throw new PkiError('malformed DER: bad signature algorithm');
  const subjectDer = toArrayBuffer(rawOf(der, subject));
  const spkiDer = toArrayBuffer(rawOf(der, spki));
  let publicKey: KeyObject;
  try {
    publicKey = knownKey ?? publicKeyFromSpki(new Uint8Array(spkiDer));
  } catch (err) {
    throw new PkiError(`bad public key: ${(err as Error).message}`);
  }
  const exts = requestedExtensions(der, attributes);
  const san = exts.get(ExtensionOid.subjectAltName);
  const bc = exts.get(ExtensionOid.basicConstraints);
  const ku = exts.get(ExtensionOid.keyUsage);
  const eku = exts.get(ExtensionOid.extKeyUsage);
  const nc = exts.get(ExtensionOid.nameConstraints);
  return {
    signed: {
      signed: rawOf(der, info),
      signatureOid: decodeOid(contentOf(der, sigOid)),
      ...(sigParams && { signatureParams: rawOf(der, sigParams) }),
      signature: contentOf(der, signature).subarray(1),
    },
    subjectDer,
    subject: describeSubject(subjectDer),
    publicKey,
    spkiDer,
    sans: san
      ? decodeSubjectAltNames(san.value)
      : { dnsNames: [], ipAddresses: [], uris: [], emailAddresses: [] },
    ...(san && { sanExtension: { critical: san.critical, der: toArrayBuffer(san.value) } }),
    ...(bc && { basicConstraints: decodeBasicConstraints(bc.value) }),
    ...(ku && { keyUsage: decodeKeyUsage(ku.value) }),
    ...(eku && { extKeyUsages: decodeExtKeyUsage(eku.value) }),
    ...(nc && { nameConstraints: { critical: nc.critical, der: toArrayBuffer(nc.value) } }),
  };
}

// Admission and then the signer read the same request, and createPublicKey plus the signature
// check are most of a parse: the second reader gets the first's result. A few hundred requests
// of at most 16 KiB (a CSR is ~1 KiB) bound the memory; a request that fails is not held, so
// it fails again the same way.
const MAX_HELD_CSRS = 256;
const MAX_HELD_CSR_LENGTH = 16 * 1024;
const recentCsrs = new RecentResults<ParsedCsr>(MAX_HELD_CSRS, MAX_HELD_CSR_LENGTH);

// The requests createCsr signed in this process, by their exact PEM text, with their public
// key: a signature this process just made with that key verifies, so the signer of a request
// made here (the local issuance, the Certificate controllers) parses it without the check and
// without importing the key from the DER again (together more than the signing itself). Any
// other text, even one byte off, is verified as before.
const madeHere = new RecentResults<KeyObject>(MAX_HELD_CSRS, MAX_HELD_CSR_LENGTH);

/** Forgets every CSR held, so the next parse of each is a first one (for benchmarks). */
export function forgetParsedCsrs(): void {
  recentCsrs.clear();
  madeHere.clear();
}

/**
 * Parses a PEM CSR and verifies its signature, synchronously; throws PkiError for non-PEM or
 * bad DER, CsrSignatureError for a signature that does not verify or an algorithm it cannot
 * check (SHA-1 and MD5 ones are refused as insecure). The result is frozen and may be shared
 * with other callers that passed the same text.
 */
export function parseCsrSync(pem: string | Buffer): ParsedCsr {
  return recentCsrs.get(pemText(pem), parseAndVerify);
}

function parseAndVerify(text: string): ParsedCsr {
  let der: Uint8Array;
  let parsed: ReturnType<typeof parseStructure>;
  const ownKey = madeHere.peek(text);
  try {
    der = csrDer(text);
    parsed = parseStructure(der, ownKey);
  } catch (err) {
    throw new PkiError(`cannot parse certificate request: ${(err as Error).message}`);
  }
  const { signed, ...fields } = parsed;
  const problem = ownKey
    ? undefined
    : csrSignatureProblem({ ...signed, publicKey: fields.publicKey });
  if (problem === UNSUPPORTED_SIGNATURE_ALGORITHM)
    throw new CsrSignatureError(
      `certificate request signature is invalid: unsupported algorithm ${signed.signatureOid}`,
      problem,
    );
  if (problem) throw new CsrSignatureError('certificate request signature is invalid', problem);
  return deepFreezeCsr({ pem: encodePem('CERTIFICATE REQUEST', der), ...fields });
}

// Shared between callers, so nobody may change it; ArrayBuffers cannot be frozen, and the
// KeyObject is immutable anyway.
function deepFreezeCsr(csr: ParsedCsr): ParsedCsr {
  for (const value of Object.values(csr)) {
    if (typeof value !== 'object' || value === null) continue;
    if (value instanceof ArrayBuffer || value instanceof KeyObject) continue;
    // The SANs' lists, the extensions' DER holders, the usages.
    for (const inner of Object.values(value)) if (Array.isArray(inner)) Object.freeze(inner);
    Object.freeze(value);
  }
  return Object.freeze(csr);
}

/** Parses a PEM CSR and verifies its signature (parseCsrSync, for callers that await). */
export async function parseCsr(pem: string | Buffer): Promise<ParsedCsr> {
  return parseCsrSync(pem);
}
