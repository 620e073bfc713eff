import t from 'tap';
import { CertificateKind } from '../../src/api/certificate.js';
import { SecretKind } from '../../src/api/secret.js';
import { keytoolList, opensslPkcs12 } from '../pki/fixtures/keystore-tools.js';
import { tlsSecret } from '../support/builders/index.js';
import {
  certificateObject,
  conditionReason,
  createCaClusterIssuer,
  startCertificateStack,
} from '../support/certificate-stack.js';

const NS = 'apps';
// ASCII: Java's legacy PBE (LegacyRC2, the default profile) refuses other passwords.
const P12_PASSWORD = 'p12-secret-password';
const JKS_PASSWORD = 'jks-literal';

const keytoolJks = (jks: Buffer, password: string) =>
  keytoolList(jks, password, { storetype: 'JKS', verbose: false });

t.test('keystores: PKCS#12 from a password Secret, JKS from a literal password', async (t) => {
  const stack = await startCertificateStack(t);
  const caPem = await createCaClusterIssuer(stack.store);
  await stack.store.create(
    CertificateKind,
    certificateObject(NS, 'java', {
      dnsNames: ['java.example'],
      privateKey: { algorithm: 'RSA', size: 2048 },
      keystores: {
        pkcs12: { create: true, passwordSecretRef: { name: 'p12-password', key: 'password' } },
        jks: { create: true, password: JKS_PASSWORD, alias: 'server' },
      },
    }),
  );
  // Without its password Secret the issuance waits, and says why.
  const warning = await stack.events.waitFor(
    (e) => e.reason === 'KeystorePasswordSecretNotFound',
    60_000,
  );
  t.equal(warning.message, 'PKCS12 keystore password Secret "p12-password" not found');
  const pending = await stack.store.get(CertificateKind, 'java', NS);
  t.equal((pending as { status?: { revision?: number } }).status?.revision, undefined);

  await stack.store.create(SecretKind, tlsSecret(NS, 'p12-password', { password: P12_PASSWORD }));
  const ready = await stack.ready(NS, 'java', 1);
  t.equal(conditionReason(ready, 'Ready'), 'Ready');
  const secret = await stack.secret(NS, 'java-tls');
  const file = (key: string) => Buffer.from(secret.data?.[key] ?? '', 'base64');
  t.match(secret.data, {
    'keystore.p12': String,
    'truststore.p12': String,
    'keystore.jks': String,
    'truststore.jks': String,
  });

  // LegacyRC2 (cert-manager's default profile) needs OpenSSL 3's legacy provider.
  const info = await opensslPkcs12(file('keystore.p12'), P12_PASSWORD, ['-nodes', '-legacy']);
  t.match(
    info,
    /pbeWithSHA1And40BitRC2-CBC/,
    'certificates under RC2-40, as LegacyRC2 writes them',
  );
  t.match(info, /BEGIN PRIVATE KEY/);
  t.ok(info.includes(caPem.trim()), 'the CA is in the keystore');
  const p12List = await keytoolList(file('keystore.p12'), P12_PASSWORD);
  t.match(p12List, /PrivateKeyEntry/);
  const trustList = await keytoolList(file('truststore.p12'), P12_PASSWORD);
  t.match(trustList, /trustedCertEntry/);

  const jks = await keytoolJks(file('keystore.jks'), JKS_PASSWORD);
  t.match(jks, /server, .*PrivateKeyEntry/);
  t.match(jks, /ca, .*trustedCertEntry/);
  const jksTrust = await keytoolJks(file('truststore.jks'), JKS_PASSWORD);
  t.match(jksTrust, /ca, .*trustedCertEntry/);
  t.notMatch(jksTrust, /PrivateKeyEntry/);

  const logged = JSON.stringify(stack.events.all());
  t.notOk(logged.includes(P12_PASSWORD) || logged.includes(JKS_PASSWORD), 'no password in events');
});
