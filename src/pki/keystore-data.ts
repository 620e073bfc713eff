import type { KeyObject, X509Certificate } from 'node:crypto';
import type { CertificateSpec } from '../api/certificate.js';
import { splitPemCertificates } from './chain.js';
import { encodeJks, type JksEntry } from './jks.js';
import { encodePkcs12, encodePkcs12TrustStore, type Pkcs12Profile } from './pkcs12.js';

// The files an application reads its key and certificate from besides PEM: keystores and the
// combined PEM, built alike for a Certificate's Secret and for a CSI volume.

/** The keystore files of a Certificate Secret, under cert-manager's names. */
export const KeystoreKey = {
  pkcs12: 'keystore.p12',
  pkcs12TrustStore: 'truststore.p12',
  jks: 'keystore.jks',
  jksTrustStore: 'truststore.jks',
} as const;

/** cert-manager's default JKS alias of the key entry. */
export const DEFAULT_JKS_ALIAS = 'certificate';

/** The keystore passwords, read from their Secrets or the literal fields. */
export interface KeystorePasswords {
  pkcs12?: string;
  jks?: string;
}

/** Trusted entries named as cert-manager names them: `ca`, then `ca-1`, `ca-2`... */
export function trustedEntries(cas: readonly X509Certificate[]): JksEntry[] {
  return cas.map((trusted, i) => ({ alias: i === 0 ? 'ca' : `ca-${i}`, trusted }));
}

/** A JKS keystore as cert-manager writes it: the key entry (key and chain) under alias, then the CAs trusted. */
export function jksKeystore(input: {
  key: KeyObject;
  chain: readonly X509Certificate[];
  cas: readonly X509Certificate[];
  alias: string;
  password: string;
  now: Date;
}): Buffer {
  const { key, chain, cas, alias, password, now } = input;
  return encodeJks([{ alias, key, chain }, ...trustedEntries(cas)], password, now);
}

/** A JKS truststore: the CAs as trusted entries (none for no CA). */
export function jksTruststore(
  cas: readonly X509Certificate[],
  password: string,
  now: Date,
): Buffer {
  return encodeJks(trustedEntries(cas), password, now);
}

/**
 * The combined PEM: the key PEM, then the certificate PEM (leaf and chain), as cert-manager's
 * CombinedPEM and kubelet's credential bundle order them. cert-manager joins the two with a
 * newline (so an empty line parts them); a volume's file has no separator.
 */
export function combinedPem(keyPem: string, certificatePem: string, separator = ''): string {
  return keyPem + separator + certificatePem;
}

/**
 * The keystores a Certificate asks for: PKCS#12 (key, leaf and CAs = the rest of the chain and
 * ca.crt; profile LegacyRC2 by default) and JKS (the key entry under the alias, the CAs as
 * trusted entries), each with a truststore of ca.crt when there is one.
 */
export async function keystoreData(input: {
  spec: CertificateSpec;
  key: KeyObject;
  certificatePem: string;
  caPem: string;
  passwords: KeystorePasswords;
  now: Date;
}): Promise<Record<string, Uint8Array>> {
  const { spec, key, certificatePem, caPem, passwords, now } = input;
  const data: Record<string, Uint8Array> = {};
  const chain = splitPemCertificates(certificatePem);
  const cas = caPem ? splitPemCertificates(caPem) : [];
  const pkcs12 = spec.keystores?.pkcs12;
  if (pkcs12?.create && passwords.pkcs12 !== undefined) {
    // Validation refuses Modern2026 before any controller acts on the Certificate.
    const profile = (pkcs12.profile ?? 'LegacyRC2') as Pkcs12Profile;
    const everything = [...chain, ...cas].map((c) => c.toString()).join('');
    data[KeystoreKey.pkcs12] = await encodePkcs12(key, everything, passwords.pkcs12, { profile });
    if (cas.length > 0)
      data[KeystoreKey.pkcs12TrustStore] = await encodePkcs12TrustStore(caPem, passwords.pkcs12, {
        profile,
      });
  }
  const jks = spec.keystores?.jks;
  if (jks?.create && passwords.jks !== undefined) {
    const alias = jks.alias || DEFAULT_JKS_ALIAS;
    data[KeystoreKey.jks] = jksKeystore({ key, chain, cas, alias, password: passwords.jks, now });
    if (cas.length > 0) data[KeystoreKey.jksTrustStore] = jksTruststore(cas, passwords.jks, now);
  }
  return data;
}
