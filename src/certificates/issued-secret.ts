import type { X509Certificate } from 'node:crypto';
import {
  CERTIFICATE_NAME_ANNOTATION,
  type Certificate,
  ISSUER_GROUP_ANNOTATION,
  ISSUER_KIND_ANNOTATION,
  ISSUER_NAME_ANNOTATION,
  MANAGED_SECRET_LABEL,
} from '../api/certificate.js';
import type { IssuerReference } from '../api/issuer-ref.js';
import { CA_CERT_KEY, TLS_CERT_KEY, TLS_PRIVATE_KEY_KEY } from '../api/secret.js';
import { goJoinCsv } from '../base/go-text.js';
import { combinedPem } from '../pki/keystore-data.js';
import { decodePemBlocks } from '../pki/pem.js';
import { certificateOfPem } from './pem-decodings.js';
import { issuedSubjectOf } from './secret-names-match.js';

/** The Secret type of a new certificate Secret; an existing Secret keeps its own. */
export const TLS_SECRET_TYPE = 'kubernetes.io/tls';
/** additionalOutputFormats: the key and certificate PEM in one file. */
export const COMBINED_PEM_KEY = 'tls-combined.pem';
/** additionalOutputFormats: the private key's DER. */
export const KEY_DER_KEY = 'key.der';

/** What cert-manager's issuing controller writes into spec.secretName, keystores aside. */
export interface IssuedSecretContent {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** Plain values; the store encodes them. */
  data: Record<string, Uint8Array>;
}

// The issuing controller derives them from the same leaf when it writes the Secret and on each
// later check of it; parsed certificates are shared by text (pem-decodings.ts) and never change.
const detailAnnotations = new WeakMap<X509Certificate, Readonly<Record<string, string>>>();

/**
 * The certificate-detail annotations cert-manager derives from the leaf: common name and the
 * SAN lists always (possibly empty), the subject lists, serial number and emails only when set.
 */
export function certificateDetailAnnotations(leaf: X509Certificate): Record<string, string> {
  let found = detailAnnotations.get(leaf);
  if (!found) {
    found = readDetailAnnotations(leaf);
    detailAnnotations.set(leaf, found);
  }
  // A copy: callers add to it.
  return { ...found };
}

function readDetailAnnotations(leaf: X509Certificate): Record<string, string> {
  const { subject, names } = issuedSubjectOf(leaf);
  const annotations: Record<string, string> = {
    'cert-manager.io/common-name': subject.commonName,
  };
  if (subject.serialNumber)
    annotations['cert-manager.io/subject-serialnumber'] = subject.serialNumber;
  const lists: Array<[string, string[]]> = [
    ['cert-manager.io/subject-organizations', subject.organizations],
    ['cert-manager.io/subject-organizationalunits', subject.organizationalUnits],
    ['cert-manager.io/subject-countries', subject.countries],
    ['cert-manager.io/subject-provinces', subject.provinces],
    ['cert-manager.io/subject-localities', subject.localities],
    ['cert-manager.io/subject-postalcodes', subject.postalCodes],
    ['cert-manager.io/subject-streetaddresses', subject.streetAddresses],
  ];
  for (const [key, values] of lists) if (values.length > 0) annotations[key] = goJoinCsv(values);
  annotations['cert-manager.io/alt-names'] = goJoinCsv(names.dnsNames);
  annotations['cert-manager.io/ip-sans'] = goJoinCsv(names.ipAddresses);
  annotations['cert-manager.io/uri-sans'] = goJoinCsv(names.uris);
  if (names.emailAddresses.length > 0)
    annotations['cert-manager.io/email-sans'] = goJoinCsv(names.emailAddresses);
  return annotations;
}

/**
 * The labels, annotations and data of a Certificate's Secret once its request is issued:
 * `tls.key`, `tls.crt`, `ca.crt` only when the issuer returned one, the additional output
 * formats, the fao label and secretTemplate, the detail annotations, the Certificate's name
 * and the request's issuer (as written on the request, so possibly empty).
 */
export function issuedSecretContent(input: {
  certificate: Certificate;
  requestIssuer: IssuerReference;
  keyPem: string;
  certificatePem: string;
  caPem: string;
}): IssuedSecretContent {
  const { certificate, requestIssuer, keyPem, certificatePem, caPem } = input;
  const template = certificate.spec.secretTemplate;
  const leaf = certificateOfPem(certificatePem);
  const annotations: Record<string, string> = {
    ...template?.annotations,
    ...certificateDetailAnnotations(leaf),
    [CERTIFICATE_NAME_ANNOTATION]: certificate.metadata.name,
  };
  const issuer = [requestIssuer.name, requestIssuer.kind ?? '', requestIssuer.group ?? ''];
  if (issuer.some((value) => value !== '')) {
    annotations[ISSUER_NAME_ANNOTATION] = requestIssuer.name;
    annotations[ISSUER_KIND_ANNOTATION] = requestIssuer.kind ?? '';
    annotations[ISSUER_GROUP_ANNOTATION] = requestIssuer.group ?? '';
  }
  const data: Record<string, Uint8Array> = {
    [TLS_PRIVATE_KEY_KEY]: Buffer.from(keyPem),
    [TLS_CERT_KEY]: Buffer.from(certificatePem),
  };
  if (caPem) data[CA_CERT_KEY] = Buffer.from(caPem);
  for (const { type } of certificate.spec.additionalOutputFormats ?? []) {
    if (type === 'CombinedPEM')
      data[COMBINED_PEM_KEY] = Buffer.from(combinedPem(keyPem, certificatePem, '\n'));
    if (type === 'DER') {
      const block = decodePemBlocks(keyPem)[0];
      if (block) data[KEY_DER_KEY] = block.der;
    }
  }
  return {
    labels: { ...template?.labels, [MANAGED_SECRET_LABEL]: 'true' },
    annotations,
    data,
  };
}
