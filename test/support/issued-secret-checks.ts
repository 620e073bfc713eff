import { X509Certificate } from 'node:crypto';
import type { Test } from 'tap';
import { type Secret, secretValue } from '../../src/api/secret.js';
import { decodePrivateKey, publicKeysEqual } from '../../src/pki/keys.js';
import { keytoolList, opensslPkcs12 } from '../pki/fixtures/keystore-tools.js';
import { opensslVerify } from './issuer-fixtures.js';

/** The keystore password of the leaf Certificates the end-to-end tests create. */
export const E2E_KEYSTORE_PASSWORD = 'changeme';

/** The spec fields of the end-to-end leaf: every output format, both keystores. */
export const E2E_LEAF_OUTPUTS = {
  additionalOutputFormats: [{ type: 'CombinedPEM' as const }, { type: 'DER' as const }],
  keystores: {
    pkcs12: {
      create: true,
      passwordSecretRef: { name: 'keystore-password', key: 'password' },
    },
    jks: { create: true, passwordSecretRef: { name: 'keystore-password', key: 'password' } },
  },
};

function value(secret: Secret, key: string): string {
  const found = secretValue(secret, key);
  if (found === undefined) throw new Error(`Secret ${secret.metadata.name} has no ${key}`);
  return found;
}

/**
 * Checks a leaf Secret written for E2E_LEAF_OUTPUTS: the chain verifies against caPem with
 * openssl, the key pairs with it, CombinedPEM and DER match the PEM data, keystore.p12 opens
 * with openssl pkcs12 (LegacyRC2, the default profile) and keystore.jks with keytool -list.
 */
export async function checkIssuedSecret(t: Test, secret: Secret, caPem: string): Promise<void> {
  const keyPem = value(secret, 'tls.key');
  const chain = value(secret, 'tls.crt');
  t.equal(value(secret, 'ca.crt'), caPem, 'ca.crt is the CA');
  t.match(await opensslVerify(caPem, chain), /OK/, 'openssl verify');
  const key = decodePrivateKey(keyPem);
  t.ok(publicKeysEqual(new X509Certificate(chain).publicKey, key), 'the key pairs with the leaf');
  t.equal(
    value(secret, 'tls-combined.pem'),
    `${keyPem}\n${chain}`,
    'CombinedPEM = key, newline, chain',
  );
  const label = /-----BEGIN ([A-Z ]+)-----/.exec(keyPem)?.[1];
  const der = key.export({
    format: 'der',
    type: label === 'EC PRIVATE KEY' ? 'sec1' : label === 'RSA PRIVATE KEY' ? 'pkcs1' : 'pkcs8',
  });
  t.same(Buffer.from(secret.data?.['key.der'] ?? '', 'base64'), der, 'key.der is the PEM block');
  const p12 = Buffer.from(secret.data?.['keystore.p12'] ?? '', 'base64');
  const info = await opensslPkcs12(p12, E2E_KEYSTORE_PASSWORD, ['-nodes', '-legacy']);
  t.match(info, /pbeWithSHA1And40BitRC2-CBC/, 'keystore.p12 in the LegacyRC2 profile');
  t.ok(
    info.includes(new X509Certificate(chain).toString().trim()),
    'openssl pkcs12 shows the leaf',
  );
  const stdout = await keytoolList(
    Buffer.from(secret.data?.['keystore.jks'] ?? '', 'base64'),
    E2E_KEYSTORE_PASSWORD,
    { storetype: 'JKS', verbose: false },
  );
  t.match(stdout, /certificate, .*PrivateKeyEntry/, 'keytool -list: the key entry');
  t.match(stdout, /ca, .*trustedCertEntry/, 'keytool -list: the CA');
}
