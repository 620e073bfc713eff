import type { KeyObject } from 'node:crypto';
import type { VolumeCertificateSpec } from '../api/volume-spec.js';
import { DEFAULT_JKS_ALIAS, trustedEntries } from '../certificates/keystore-data.js';
import { splitPemCertificates } from '../pki/chain.js';
import { encodeJks } from '../pki/jks.js';

// The outputs cert-csi adds to csi-driver's (README "Extra outputs"): they are built from the
// same key, certificate and CA as tls.key, tls.crt and ca.crt, and written in the same
// generation, so a reader never sees one file of a renewal beside another of the previous one.

/**
 * The combined PEM file: the key as the key file has it, then the certificate file (leaf and
 * chain), as cert-manager's CombinedPEM and kubelet's credential bundle order them.
 */
export function combinedPem(keyPem: string, certificatePem: string): string {
  // Both are PEM text ending in a newline (the key as node:crypto exports it): no separator.
  return keyPem + certificatePem;
}

/**
 * The files of the volume's optional outputs (combined PEM, JKS keystore and truststore) by
 * file name. Throws when the certificate or the CA holds something that is not a certificate.
 */
export function extraOutputFiles(input: {
  files: VolumeCertificateSpec['files'];
  key: KeyObject;
  keyPem: string;
  certificatePem: string;
  caPem: string;
  now: Date;
}): Map<string, Uint8Array> {
  const { files, key, keyPem, certificatePem, caPem, now } = input;
  const out = new Map<string, Uint8Array>();
  if (files.combinedPem !== undefined) {
    out.set(files.combinedPem, Buffer.from(combinedPem(keyPem, certificatePem)));
  }
  if (files.jks !== undefined) {
    // As cert-manager's keystores.jks: the key entry `certificate`, the CAs trusted as `ca`,
    // `ca-1`... in both stores. The truststore is written even without a CA (no entries), as
    // the CA file is: an application's configuration can always name it.
    const chain = splitPemCertificates(certificatePem);
    const cas = trustedEntries(splitPemCertificates(caPem));
    const { filename, truststoreFilename, password } = files.jks;
    out.set(filename, encodeJks([{ alias: DEFAULT_JKS_ALIAS, key, chain }, ...cas], password, now));
    out.set(truststoreFilename, encodeJks(cas, password, now));
  }
  return out;
}
