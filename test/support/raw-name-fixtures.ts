import { KeyObject, webcrypto } from 'node:crypto';
import { toArrayBuffer } from '../../src/pki/der.js';
import { encodePem } from '../../src/pki/pem.js';
import { x509 } from './x509-provider.js';

// Certificates and CSRs whose subject is raw DER that our own encoders would refuse (a name
// no reader can read): what a careless issuer or client could send us.

const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** A Name holding one attribute: the OID's DER (hex) and the value's DER (hex), e.g. CN and `0101ff`. */
export function oneAttributeName(valueHex: string, oidHex = '0603550403'): ArrayBuffer {
  const atv = Buffer.from(`${oidHex}${valueHex}`, 'hex');
  const sequence = Buffer.concat([Buffer.from([0x30, atv.length]), atv]);
  const set = Buffer.concat([Buffer.from([0x31, sequence.length]), sequence]);
  return toArrayBuffer(Buffer.concat([Buffer.from([0x30, set.length]), set]));
}

/** A self-signed certificate with this subject, made without any check of ours. */
export async function certificateWithSubject(
  subjectDer: ArrayBuffer,
): Promise<{ pem: string; key: KeyObject }> {
  const keys = (await webcrypto.subtle.generateKey(EC, true, [
    'sign',
    'verify',
  ])) as webcrypto.CryptoKeyPair;
  const name = new x509.Name(subjectDer);
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: '01',
    subject: name,
    issuer: name,
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 3_600_000),
    publicKey: keys.publicKey,
    signingKey: keys.privateKey,
    signingAlgorithm: EC,
  });
  return {
    pem: encodePem('CERTIFICATE', new Uint8Array(certificate.rawData)),
    key: KeyObject.from(keys.privateKey),
  };
}

/** A CSR with this subject, made without any check of ours. */
export async function csrWithSubject(subjectDer: ArrayBuffer): Promise<string> {
  const keys = (await webcrypto.subtle.generateKey(EC, true, [
    'sign',
    'verify',
  ])) as webcrypto.CryptoKeyPair;
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: new x509.Name(subjectDer),
    keys,
    signingAlgorithm: EC,
  });
  return encodePem('CERTIFICATE REQUEST', new Uint8Array(csr.rawData));
}
