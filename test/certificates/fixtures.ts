import { X509Certificate } from 'node:crypto';
import type { CertificateRequest } from '../../src/api/certificate-request.js';
import { signCertificate } from '../../src/pki/certificate.js';
import { createCsr, parseCsr } from '../../src/pki/csr.js';
import { decodePrivateKey, encodePrivateKey, generatePrivateKey } from '../../src/pki/keys.js';
import { makeCA } from '../support/issuer-fixtures.js';

/**
 * A CertificateRequest in namespace apps with a revision annotation (none when undefined);
 * with owner, controlled by the Certificate of that UID (or merely owned, with controller false).
 */
export function revisionRequest(
  name: string,
  revision: string | undefined,
  owner?: { uid: string; controller?: boolean },
): CertificateRequest {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'CertificateRequest',
    metadata: {
      name,
      namespace: 'apps',
      ...(revision === undefined
        ? {}
        : { annotations: { 'cert-manager.io/certificate-revision': revision } }),
      ...(owner
        ? {
            ownerReferences: [
              {
                apiVersion: 'cert-manager.io/v1',
                kind: 'Certificate',
                name: 'web',
                uid: owner.uid,
                controller: owner.controller ?? true,
              },
            ],
          }
        : {}),
    },
    spec: { request: '', issuerRef: { name: 'ca' } },
  };
}

/** A CA-signed leaf with its key and the CA, as PEM: what an issued Certificate Secret holds. */
export interface IssuedLeaf {
  keyPem: string;
  certificatePem: string;
  caPem: string;
  /** The leaf's serial number, lowercase hex. */
  serialNumber: string;
}

/** Signs a leaf for commonName and dnsNames with a fresh test CA (ECDSA P-256 keys). */
export async function issuedLeaf(commonName: string, dnsNames: string[]): Promise<IssuedLeaf> {
  const ca = await makeCA();
  const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
  const csr = await parseCsr(await createCsr({ key, subject: { commonName }, dnsNames }));
  const certificatePem = await signCertificate(
    csr,
    { durationMs: 90 * 24 * 3600 * 1000, isCA: false, usages: ['digital signature'] },
    { certificatePem: ca.certificatePem, key: decodePrivateKey(ca.keyPem) },
  );
  return {
    keyPem: encodePrivateKey(key, 'PKCS8'),
    certificatePem,
    caPem: ca.certificatePem,
    serialNumber: new X509Certificate(certificatePem).serialNumber.toLowerCase(),
  };
}
