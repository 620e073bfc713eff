import type { KeyObject, X509Certificate } from 'node:crypto';
import type { CertificateSpec } from '../api/certificate.js';
import { splitPemCertificates } from '../pki/chain.js';
import { encodeJks, type JksEntry } from '../pki/jks.js';
import { encodePkcs12, encodePkcs12TrustStore, type Pkcs12Profile } from '../pki/pkcs12.js';

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
    data[KeystoreKey.jks] = encodeJks(
      [{ alias, key, chain }, ...trustedEntries(cas)],
      passwords.jks,
      now,
    );
    if (cas.length > 0)
      data[KeystoreKey.jksTrustStore] = encodeJks(trustedEntries(cas), passwords.jks, now);
  }
  return data;
}
