// @peculiar/x509 builds the odd certificates and requests some tests need (attributes, names
// and algorithms our own encoder never writes) and reads extensions back independently of our
// parser. The product no longer uses it (src/pki encodes and signs with node:crypto), so it is
// a devDependency. It reads decorator metadata at import time: the Reflect polyfill first.
import 'reflect-metadata';
import { type KeyObject, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import {
  keySpecOf,
  requirePrivate,
  type SigningAlgorithm,
  signingAlgorithmFor,
  spkiOf,
} from '../../src/pki/keys.js';

x509.cryptoProvider.set(webcrypto);

export { x509 };

const WEB_CURVES = { 256: 'P-256', 384: 'P-384', 521: 'P-521' } as const;

/**
 * Imports a KeyObject into WebCrypto for @peculiar/x509 (Node 20 has no KeyObject.toCryptoKey).
 * An RSA CryptoKey carries its hash and @peculiar/x509 signs with the key's hash, not the
 * requested one, so RSA keys are imported with `algorithm`'s hash.
 */
export async function toCryptoKeyPair(
  key: KeyObject,
  algorithm: SigningAlgorithm = signingAlgorithmFor(key, 'csr'),
): Promise<{ privateKey: webcrypto.CryptoKey; publicKey: webcrypto.CryptoKey }> {
  requirePrivate(key);
  const spec = keySpecOf(key);
  let params: webcrypto.RsaHashedImportParams | webcrypto.EcKeyImportParams | webcrypto.Algorithm;
  if (spec.algorithm === 'RSA') {
    params = {
      name: 'RSASSA-PKCS1-v1_5',
      hash: 'hash' in algorithm ? algorithm.hash : 'SHA-256',
    };
  } else if (spec.algorithm === 'ECDSA') {
    params = { name: 'ECDSA', namedCurve: WEB_CURVES[spec.size] };
  } else {
    params = { name: 'Ed25519' };
  }
  const subtle = webcrypto.subtle;
  const pkcs8 = key.export({ type: 'pkcs8', format: 'der' });
  const [privateKey, publicKey] = await Promise.all([
    subtle.importKey('pkcs8', pkcs8, params, false, ['sign']),
    subtle.importKey('spki', spkiOf(key), params, true, ['verify']),
  ]);
  return { privateKey, publicKey };
}
