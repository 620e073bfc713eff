import type { KeyObject } from 'node:crypto';
import type { VolumeCertificateSpec } from '../../api/volume-spec.js';
import { errorMessage } from '../../base/error-message.js';
import { splitPemCertificates } from '../../pki/chain.js';
import { decodePrivateKey } from '../../pki/keys.js';
import {
  combinedPem,
  DEFAULT_JKS_ALIAS,
  jksKeystore,
  jksTruststore,
} from '../../pki/keystore-data.js';

// The outputs cert-csi adds to csi-driver's (docs/volume-attributes.md, "Extra outputs"): they are built from the
// same key, certificate and CA as tls.key, tls.crt and ca.crt, and written in the same
// generation, so a reader never sees one file of a renewal beside another of the previous one.

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
    // The key as the key file has it, then the certificate file: both are PEM text ending in a
    // newline (the key as node:crypto exports it), so no separator.
    out.set(files.combinedPem, Buffer.from(combinedPem(keyPem, certificatePem)));
  }
  if (files.jks !== undefined) {
    for (const [name, data] of jksFiles({ jks: files.jks, key, certificatePem, caPem, now })) {
      out.set(name, data);
    }
  }
  return out;
}

type JksOutput = NonNullable<VolumeCertificateSpec['files']['jks']>;

/**
 * The JKS keystore (key entry, then the CA as trusted entries) and truststore (the CA) by file
 * name. Throws when the chain or the CA holds something that is not a certificate, or the key
 * is not the leaf's.
 */
export function jksFiles(input: {
  jks: JksOutput;
  key: KeyObject;
  certificatePem: string;
  caPem: string;
  now: Date;
}): Map<string, Buffer> {
  const { jks, key, certificatePem, caPem, now } = input;
  // As cert-manager's keystores.jks: the key entry `certificate`, the CAs trusted as `ca`,
  // `ca-1`... in both stores. The truststore is written even without a CA (no entries), as
  // the CA file is: an application's configuration can always name it.
  const chain = splitPemCertificates(certificatePem);
  const cas = splitPemCertificates(caPem);
  const { filename, truststoreFilename, password } = jks;
  return new Map([
    [filename, jksKeystore({ key, chain, cas, alias: DEFAULT_JKS_ALIAS, password, now })],
    [truststoreFilename, jksTruststore(cas, password, now)],
  ]);
}

/**
 * The JKS files of a generation whose CA file was replaced (a trust bundle): the key and chain
 * as its key and certificate files hold them, the new CA trusted. Throws naming the file that
 * is missing or unreadable (never its content, never the password).
 */
export function jksFilesForCa(input: {
  files: ReadonlyMap<string, Uint8Array>;
  names: VolumeCertificateSpec['files'];
  jks: JksOutput;
  caPem: string;
  now: Date;
}): Map<string, Buffer> {
  const { files, names, jks, caPem, now } = input;
  const keyPem = files.get(names.privateKey);
  const certificatePem = files.get(names.certificate);
  if (keyPem === undefined) throw new Error(`no key file ${names.privateKey}`);
  if (certificatePem === undefined) throw new Error(`no certificate file ${names.certificate}`);
  let key: KeyObject;
  try {
    key = decodePrivateKey(Buffer.from(keyPem));
  } catch (err) {
    throw new Error(`key file ${names.privateKey}: ${errorMessage(err)}`);
  }
  const chainPem = Buffer.from(certificatePem).toString('utf8');
  return jksFiles({ jks, key, certificatePem: chainPem, caPem, now });
}
