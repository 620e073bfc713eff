import { invalidValue, tooLong } from './attribute-errors.js';

// Limits on what a certificate names, so that every accepted volume gets a CSR that
// builds, signs and fits a CertificateRequest (the API server stores objects of at
// most 1.5 MiB; the CSR is in it twice over, base64 of PEM). Measured: a CSR with
// 5,000 DNS names of 225 characters (1.5 MB) still builds and verifies for RSA,
// ECDSA and Ed25519; 10,000 gives a CSR whose signature fails. The caps leave the
// worst accepted CSR at about 200 KB.

/** X.509's ub-common-name (RFC 5280), which cert-manager also enforces on a Certificate. */
export const COMMON_NAME_MAX_CHARACTERS = 64;
/** The largest RFC 5280 upper bound of the other subject attributes (ub-locality-name, ub-state-name). */
export const SUBJECT_VALUE_MAX_CHARACTERS = 128;
/** Values in one subject list (organizations, countries, ...). */
export const SUBJECT_VALUES_MAX = 100;
/** A literal subject: room for every subject attribute at its upper bound, and more. */
export const LITERAL_SUBJECT_MAX_CHARACTERS = 4096;
/** DNS names, IP addresses and URIs together; also Let's Encrypt's and many CAs' limit. */
export const SUBJECT_ALT_NAMES_MAX = 100;
/** A DNS name (RFC 1035); each label at most 63. */
export const DNS_NAME_MAX_CHARACTERS = 253;
const DNS_LABEL_MAX_CHARACTERS = 63;
/** A URI SAN; SPIFFE IDs have the same limit. */
export const URI_MAX_CHARACTERS = 2048;

const HOST_LABEL = /^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?$/;

/**
 * Why name is no DNS SAN, or undefined: a host name (RFC 1123: letters, digits and '-'
 * in dot-separated labels of 1-63 characters, not starting or ending with '-'), at most
 * 253 characters, optionally `*.` then such a name. Underscores and a trailing dot are refused.
 */
export function dnsNameProblem(name: string): string | undefined {
  if (name.length > DNS_NAME_MAX_CHARACTERS) return tooLong(name, DNS_NAME_MAX_CHARACTERS);
  const host = name.startsWith('*.') ? name.slice(2) : name;
  const labels = host.split('.');
  if (labels.every((label) => label.length <= DNS_LABEL_MAX_CHARACTERS && HOST_LABEL.test(label)))
    return undefined;
  return invalidValue(
    name,
    `must be a DNS name: dot-separated labels of ASCII letters, digits and '-' (not first or last), each at most ${DNS_LABEL_MAX_CHARACTERS} characters, optionally after a leading '*.'`,
  );
}
