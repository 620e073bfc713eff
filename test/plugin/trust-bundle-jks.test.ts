import { X509Certificate } from 'node:crypto';
import { readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { DATA_LINK } from '../../src/fs/atomic-writer.js';
import type { MemoryStore } from '../../src/store/memory-store.js';
import { keytoolList } from '../pki/fixtures/keystore-tools.js';
import { putConfigMap } from '../support/config-map-fixtures.js';
import { until } from '../support/eventually.js';
import { makeCA } from '../support/issuer-fixtures.js';
import { embeddedCA, startPlugin } from '../support/plugin-harness.js';

const NAMESPACE = 'sandbox';
const JKS_PASSWORD = 'jks-trust-secret';
const attributes = embeddedCA({
  'csi.cert-manager.io/key-algorithm': 'ECDSA',
  // Java refuses to parse a certificate with neither a subject nor a SAN.
  'csi.cert-manager.io/dns-names': 'app.sandbox.svc',
  'csi.cert-manager.io/trust-bundle': 'configmap:roots/ca.crt',
  'csi.cert-manager.io/jks-enable': 'true',
  'csi.cert-manager.io/jks-password': JKS_PASSWORD,
});
const [A, B, C] = (await Promise.all([makeCA(), makeCA(), makeCA()])).map(
  (ca) => new X509Certificate(ca.certificatePem),
) as [X509Certificate, X509Certificate, X509Certificate];
// Generous: only a broken watch reaches it.
const FOLLOW_TIMEOUT_MS = 20_000;

const setRoots = (store: MemoryStore, pem: string) =>
  putConfigMap(store, NAMESPACE, 'roots', { 'ca.crt': pem });

/** The entries `keytool -list` shows: alias, kind and SHA-256 fingerprint, sorted by alias. */
function entriesOf(listing: string): Array<[alias: string, kind: string, fingerprint: string]> {
  const entries = [
    ...listing.matchAll(/^([^,\n]+), [^\n]*?(\w+Entry),\s*\n.*?\(SHA-256\): (\S+)/gm),
  ];
  return entries
    .map((m) => [m[1], m[2], m[3]] as [string, string, string])
    .sort((x, y) => x[0].localeCompare(y[0]));
}

/** Both stores of one generation as keytool lists them (two JVMs at once: each takes ~1 s). */
async function listStores(generation: string) {
  const list = (name: string) =>
    readFile(join(generation, name)).then((store) =>
      keytoolList(store, JKS_PASSWORD, { storetype: 'JKS', verbose: false }),
    );
  const [keystore, truststore] = await Promise.all([list('keystore.jks'), list('truststore.jks')]);
  return { keystore: entriesOf(keystore), truststore: entriesOf(truststore) };
}

const trusted = (...cas: X509Certificate[]) => cas.map((ca) => ca.fingerprint256).sort();
const fingerprints = (entries: Array<[string, string, string]>, kind: string) =>
  entries
    .filter(([, k]) => k === kind)
    .map(([, , f]) => f)
    .sort();

t.test(
  'trust bundle + JKS: both stores trust the bundle at issuance and follow it, in one generation',
  async (t) => {
    const p = await startPlugin(t);
    await setRoots(p.store, A.toString());
    const { target } = await p.publish('vol-jks', attributes);
    const dataDir = p.dataRoot.dataDir('vol-jks');
    const generationOf = async () => join(dataDir, await readlink(join(dataDir, DATA_LINK)));

    // At issuance: the bundle, not the issuer's CA, is what both stores trust.
    const first = await generationOf();
    t.equal(await readFile(join(first, 'ca.crt'), 'utf8'), A.toString(), 'ca.crt is the bundle');
    const leaf = new X509Certificate(await readFile(join(first, 'tls.crt')));
    const issued = await listStores(first);
    t.same(fingerprints(issued.truststore, 'trustedCertEntry'), trusted(A), 'truststore: A');
    t.same(issued.keystore, [
      ['ca', 'trustedCertEntry', A.fingerprint256],
      ['certificate', 'PrivateKeyEntry', leaf.fingerprint256],
    ]);
    const requests = (await p.requests()).map((r) => r.metadata.name);
    const key = await readFile(join(target, 'tls.key'), 'utf8');

    // A rollover publishes two roots: a new generation with the CA file and both stores.
    await setRoots(p.store, B.toString() + C.toString());
    await until(
      async () =>
        (await readFile(join(target, 'ca.crt'), 'utf8').catch(() => '')) ===
        B.toString() + C.toString(),
      { what: 'the volume to follow the ConfigMap', timeoutMs: FOLLOW_TIMEOUT_MS, intervalMs: 2 },
    );
    const second = await generationOf();
    t.not(second, first, 'a new generation');
    t.same(
      (await readdir(second)).sort(),
      ['ca.crt', 'generation.json', 'keystore.jks', 'tls.crt', 'tls.key', 'truststore.jks'],
      'every file in the generation the link names',
    );
    const certificate = new X509Certificate(await readFile(join(second, 'tls.crt')));
    t.same(
      JSON.parse(await readFile(join(second, 'generation.json'), 'utf8')),
      {
        generation: 2,
        serial: certificate.serialNumber.toUpperCase(),
        notBefore: new Date(certificate.validFrom).toISOString().replace('.000Z', 'Z'),
        notAfter: new Date(certificate.validTo).toISOString().replace('.000Z', 'Z'),
        reason: 'trust-bundle-changed',
      },
      'the generation file counts the bundle rewrite, same certificate',
    );
    const followed = await listStores(second);
    t.same(
      fingerprints(followed.truststore, 'trustedCertEntry'),
      trusted(B, C),
      'truststore: B, C',
    );
    t.same(fingerprints(followed.keystore, 'trustedCertEntry'), trusted(B, C), 'keystore: B, C');
    t.same(
      followed.keystore.filter(([alias]) => alias === 'certificate'),
      [['certificate', 'PrivateKeyEntry', leaf.fingerprint256]],
      'the key entry holds the same certificate',
    );
    t.equal(await readFile(join(second, 'tls.key'), 'utf8'), key, 'key unchanged');
    t.same(
      (await p.requests()).map((r) => r.metadata.name),
      requests,
      'no new CertificateRequest',
    );
  },
);
