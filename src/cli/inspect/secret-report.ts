import { X509Certificate } from 'node:crypto';
import { errorMessage } from '../../base/error-message.js';
import { decodePrivateKey, publicKeysEqual } from '../../pki/keys.js';
import { decodePemBlocks } from '../../pki/pem.js';

// What `cert-csi inspect secret` prints of a kubernetes.io/tls Secret, as cmctl inspect secret
// does: the leaf's names, validity, issuer and subject, and the checks a person wants before
// trusting the Secret (does the chain verify against ca.crt, does tls.key match the leaf).

/** The PEM texts of a TLS Secret, as its data keys hold them. */
export interface TlsSecretData {
  'tls.crt'?: string | undefined;
  'tls.key'?: string | undefined;
  'ca.crt'?: string | undefined;
}

/** The certificates of a PEM text, in order; throws naming the key when one cannot be read. */
function certificatesOf(pem: string, key: string): X509Certificate[] {
  return decodePemBlocks(pem)
    .filter((block) => block.label === 'CERTIFICATE')
    .map((block, index) => {
      try {
        return new X509Certificate(block.der);
      } catch (err) {
        throw new Error(`${key}: certificate ${index + 1} cannot be read: ${errorMessage(err)}`);
      }
    });
}

const list = (items: readonly string[]) => (items.length === 0 ? '<none>' : items.join(', '));

// node's subjectAltName: `DNS:a, IP Address:1.2.3.4, URI:spiffe://x, email:a@b`.
function namesOf(cert: X509Certificate, prefix: string): string[] {
  return (cert.subjectAltName ?? '')
    .split(', ')
    .filter((entry) => entry.startsWith(`${prefix}:`))
    .map((entry) => entry.slice(prefix.length + 1));
}

const dn = (text: string | undefined) => (text ? text.split('\n').join(', ') : '<none>');

/**
 * Whether the leaf verifies through the chain's intermediates to a certificate of ca.crt
 * (each signature, and each issuer's name), or why not.
 */
function chainCheck(chain: X509Certificate[], roots: X509Certificate[]): string {
  if (roots.length === 0) return 'not checked: the Secret has no ca.crt';
  const [leaf, ...rest] = chain as [X509Certificate, ...X509Certificate[]];
  const issued = (child: X509Certificate) => (parent: X509Certificate) =>
    child.checkIssued(parent) && child.verify(parent.publicKey);
  const visited = new Set([leaf]);
  let current = leaf;
  for (;;) {
    if (roots.some(issued(current))) {
      const between = visited.size - 1;
      return `verifies against ca.crt (leaf, ${between} intermediate${between === 1 ? '' : 's'}, root)`;
    }
    const next = rest.find((c) => !visited.has(c) && issued(current)(c));
    if (next === undefined) {
      return `does not verify: no certificate of ca.crt issued ${dn(current.subject)} (its issuer: ${dn(current.issuer)})`;
    }
    visited.add(next);
    current = next;
  }
}

function keyCheck(leaf: X509Certificate, keyPem: string | undefined): string {
  if (keyPem === undefined) return 'not checked: the Secret has no tls.key';
  try {
    return publicKeysEqual(decodePrivateKey(keyPem), leaf.publicKey)
      ? 'tls.key matches the certificate'
      : 'tls.key does NOT match the certificate';
  } catch (err) {
    return `tls.key cannot be read: ${errorMessage(err)}`;
  }
}

function validityCheck(leaf: X509Certificate, now: Date): string {
  const notBefore = new Date(leaf.validFrom);
  const notAfter = new Date(leaf.validTo);
  if (now < notBefore) return `NOT valid yet (from ${notBefore.toISOString()})`;
  if (now > notAfter) return `EXPIRED (${notAfter.toISOString()})`;
  const days = Math.floor((notAfter.getTime() - now.getTime()) / 86_400_000);
  return `valid now, ${days} day${days === 1 ? '' : 's'} left`;
}

/** The report of a TLS Secret's data at now; throws when tls.crt holds no certificate. */
export function secretReport(data: TlsSecretData, now: Date): string {
  const chain = certificatesOf(data['tls.crt'] ?? '', 'tls.crt');
  const leaf = chain[0];
  if (leaf === undefined) throw new Error('no certificate in tls.crt');
  const roots = certificatesOf(data['ca.crt'] ?? '', 'ca.crt');
  const lines = [
    'Valid for:',
    `\tDNS Names: ${list(namesOf(leaf, 'DNS'))}`,
    `\tURIs: ${list(namesOf(leaf, 'URI'))}`,
    `\tIP Addresses: ${list(namesOf(leaf, 'IP Address'))}`,
    `\tEmail Addresses: ${list(namesOf(leaf, 'email'))}`,
    '',
    'Validity period:',
    `\tNot Before: ${new Date(leaf.validFrom).toUTCString()}`,
    `\tNot After: ${new Date(leaf.validTo).toUTCString()}`,
    '',
    'Issued By:',
    `\t${dn(leaf.issuer)}`,
    '',
    'Issued For:',
    `\t${dn(leaf.subject)}`,
    '',
    'Certificate:',
    `\tSerial Number: ${leaf.serialNumber}`,
    `\tFingerprint (SHA-256): ${leaf.fingerprint256}`,
    `\tIs a CA certificate: ${leaf.ca}`,
    `\tChain in tls.crt: ${chain.length} certificate${chain.length === 1 ? '' : 's'}`,
    '',
    'Checks:',
    `\tValidity: ${validityCheck(leaf, now)}`,
    `\tChain: ${chainCheck(chain, roots)}`,
    `\tKey: ${keyCheck(leaf, data['tls.key'])}`,
  ];
  return `${lines.join('\n')}\n`;
}
