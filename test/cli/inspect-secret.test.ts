import { X509Certificate } from 'node:crypto';
import t from 'tap';
import { SecretKind } from '../../src/api/secret.js';
import { runInspect } from '../../src/cli/inspect/inspect-command.js';
import { secretReport } from '../../src/cli/inspect/secret-report.js';
import { signCertificate } from '../../src/pki/certificate.js';
import { createCsr, parseCsr } from '../../src/pki/csr.js';
import { decodePrivateKey, encodePrivateKey, generatePrivateKey } from '../../src/pki/keys.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { StateDirectory } from '../../src/store/state-directory/state-directory.js';
import { issuedLeaf } from '../certificates/fixtures.js';
import { tlsSecret } from '../support/builders/index.js';
import { NODE_TOKEN, startCluster } from '../support/cluster-harness.js';
import { runInProcess } from '../support/in-process-command.js';
import { makeCA } from '../support/issuer-fixtures.js';
import { tempDir } from '../support/temp-dir.js';

// `cert-csi inspect secret NAMESPACE/NAME` (cmctl inspect secret): the leaf described, and the
// checks a person reads before trusting the Secret.

const leaf = await issuedLeaf('web.sandbox.svc', ['web.sandbox.svc']);
const DAY = 86_400_000;
const issuedAt = new Date(new X509Certificate(leaf.certificatePem).validFrom);

/** A leaf signed by an intermediate CA signed by a root: tls.crt holds leaf and intermediate. */
async function chainedLeaf() {
  const root = await makeCA();
  const intermediateKey = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
  const intermediate = await signCertificate(
    await parseCsr(
      await createCsr({ key: intermediateKey, subject: { commonName: 'intermediate' } }),
    ),
    { durationMs: 30 * DAY, isCA: true, usages: ['cert sign'] },
    { certificatePem: root.certificatePem, key: decodePrivateKey(root.keyPem) },
  );
  const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
  const certificate = await signCertificate(
    await parseCsr(await createCsr({ key, uris: ['spiffe://x/y'], ipAddresses: ['10.0.0.1'] })),
    { durationMs: DAY, isCA: false, usages: ['digital signature'] },
    { certificatePem: intermediate, key: intermediateKey },
  );
  return {
    'tls.crt': certificate + intermediate,
    'tls.key': encodePrivateKey(key, 'PKCS8'),
    'ca.crt': root.certificatePem,
  };
}

t.test('the report: names, validity, issuer, and the three checks', async (t) => {
  const now = new Date(issuedAt.getTime() + DAY);
  const good = secretReport(
    { 'tls.crt': leaf.certificatePem, 'tls.key': leaf.keyPem, 'ca.crt': leaf.caPem },
    now,
  );
  t.match(good, /^Valid for:\n\tDNS Names: web\.sandbox\.svc\n\tURIs: <none>\n/);
  t.match(good, /\nIssued By:\n\tCN=cert-csi test CA\n/);
  t.match(good, /\nIssued For:\n\tCN=web\.sandbox\.svc\n/);
  t.match(good, new RegExp(`\\tSerial Number: ${leaf.serialNumber}\\n`, 'i'));
  t.match(good, /\tIs a CA certificate: false\n/);
  t.match(
    good,
    /\nChecks:\n\tValidity: valid now, 89 days left\n\tChain: verifies against ca\.crt \(leaf, 0 intermediates, root\)\n\tKey: tls\.key matches the certificate\n$/,
  );

  const other = await issuedLeaf('other', ['other']);
  const checks = (data: Parameters<typeof secretReport>[0], at = now) =>
    secretReport(data, at).split('\nChecks:\n')[1];
  const cases: Array<[string, Parameters<typeof secretReport>[0], Date, string]> = [
    [
      "another CA's ca.crt, another key",
      { 'tls.crt': leaf.certificatePem, 'tls.key': other.keyPem, 'ca.crt': other.caPem },
      now,
      '\tValidity: valid now, 89 days left\n\tChain: does not verify: no certificate of ca.crt issued CN=web.sandbox.svc (its issuer: CN=cert-csi test CA)\n\tKey: tls.key does NOT match the certificate\n',
    ],
    [
      'no ca.crt, no tls.key',
      { 'tls.crt': leaf.certificatePem },
      now,
      '\tValidity: valid now, 89 days left\n\tChain: not checked: the Secret has no ca.crt\n\tKey: not checked: the Secret has no tls.key\n',
    ],
    [
      'expired, a key that is no key',
      { 'tls.crt': leaf.certificatePem, 'tls.key': 'garbage', 'ca.crt': leaf.caPem },
      new Date(issuedAt.getTime() + 100 * DAY),
      `\tValidity: EXPIRED (${new Date(new X509Certificate(leaf.certificatePem).validTo).toISOString()})\n\tChain: verifies against ca.crt (leaf, 0 intermediates, root)\n\tKey: tls.key cannot be read: `,
    ],
    [
      'not valid yet',
      { 'tls.crt': leaf.certificatePem, 'ca.crt': leaf.caPem },
      new Date(issuedAt.getTime() - DAY),
      `\tValidity: NOT valid yet (from ${issuedAt.toISOString()})\n`,
    ],
    [
      'a chain through an intermediate, one day left',
      await chainedLeaf(),
      new Date(Date.now() + 1000),
      '\tValidity: valid now, 0 days left\n\tChain: verifies against ca.crt (leaf, 1 intermediate, root)\n\tKey: tls.key matches the certificate\n',
    ],
  ];
  for (const [what, data, at, expected] of cases) {
    t.ok(checks(data, at)?.startsWith(expected), `${what}: ${checks(data, at)}`);
  }
  const wrongRoot = { ...(await chainedLeaf()), 'ca.crt': other.caPem };
  t.match(
    checks(wrongRoot, new Date()),
    /^\tValidity: valid now, 0 days left\n\tChain: does not verify: no certificate of ca\.crt issued CN=intermediate \(its issuer: CN=cert-csi test CA\)\n/,
    'the chain followed through tls.crt as far as it goes',
  );
  const chained = secretReport(await chainedLeaf(), new Date());
  t.match(chained, /\tURIs: spiffe:\/\/x\/y\n\tIP Addresses: 10\.0\.0\.1\n/);
  t.match(chained, /\tChain in tls\.crt: 2 certificates\n/);
  t.throws(() => secretReport({ 'tls.crt': '' }, now), { message: 'no certificate in tls.crt' });
  t.throws(() => secretReport({}, now), { message: 'no certificate in tls.crt' }, 'no tls.crt');
  const lastDay = new Date(new X509Certificate(leaf.certificatePem).validTo).getTime() - 1.5 * DAY;
  t.match(
    checks({ 'tls.crt': leaf.certificatePem }, new Date(lastDay)),
    /^\tValidity: valid now, 1 day left\n/,
  );
  // A self-signed CA: no SAN at all, and its own root.
  const ca = await makeCA();
  const selfSigned = secretReport(
    { 'tls.crt': ca.certificatePem, 'ca.crt': ca.certificatePem },
    new Date(),
  );
  t.match(selfSigned, /^Valid for:\n\tDNS Names: <none>\n\tURIs: <none>\n/);
  t.match(selfSigned, /\tIs a CA certificate: true\n\tChain in tls\.crt: 1 certificate\n/);
  t.throws(
    () =>
      secretReport(
        { 'tls.crt': '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n' },
        now,
      ),
    { message: /^tls\.crt: certificate 1 cannot be read: / },
  );
});

t.test('embedded: a Secret of the state dir', async (t) => {
  const dir = await tempDir(t, 'cert-csi-inspect-');
  const store = await MemoryStore.open({ persistence: new StateDirectory(dir) });
  t.teardown(() => store.close());
  await store.create(
    SecretKind,
    tlsSecret('sandbox', 'web-tls', {
      'tls.crt': leaf.certificatePem,
      'tls.key': leaf.keyPem,
      'ca.crt': leaf.caPem,
    }),
  );
  await store.create(SecretKind, tlsSecret('sandbox', 'empty', { 'tls.crt': '' }));
  const inspected = await runInProcess(runInspect, [
    'secret',
    'sandbox/web-tls',
    '--state-dir',
    dir,
  ]);
  t.equal(inspected.code, 0, inspected.stderr);
  t.match(inspected.stdout, /^Valid for:\n\tDNS Names: web\.sandbox\.svc\n/);
  t.match(inspected.stdout, /\tKey: tls\.key matches the certificate\n$/);

  const failures: Array<[string[], number, string]> = [
    [
      ['secret', 'sandbox/nope'],
      1,
      'cert-csi inspect: Secret sandbox/nope not found\nsee cert-csi inspect --help\n',
    ],
    [
      ['secret', 'sandbox/empty'],
      1,
      'cert-csi inspect: Secret sandbox/empty: no certificate in tls.crt\nsee cert-csi inspect --help\n',
    ],
    [
      ['certificate', 'sandbox/web'],
      2,
      'cert-csi inspect: what to inspect: cert-csi inspect secret NAMESPACE/NAME\nsee cert-csi inspect --help\n',
    ],
    [
      ['secret'],
      2,
      'cert-csi inspect: give one Secret: cert-csi inspect secret NAMESPACE/NAME\nsee cert-csi inspect --help\n',
    ],
    [
      ['secret', 'web-tls'],
      2,
      'cert-csi inspect: secret: expected NAMESPACE/NAME, got "web-tls"\nsee cert-csi inspect --help\n',
    ],
  ];
  for (const [args, code, stderr] of failures) {
    const result = await runInProcess(runInspect, [...args, '--state-dir', dir]);
    t.equal(result.code, code, args.join(' '));
    t.equal(result.stderr, stderr, args.join(' '));
  }
  const nowhere = await runInProcess(runInspect, ['secret', 'sandbox/web-tls']);
  t.equal(nowhere.code, 2);
  t.match(nowhere.stderr, /^cert-csi inspect: inspect secret needs --state-dir DIR/);
});

t.test('cluster: a Secret read through the API, as RBAC allows', async (t) => {
  const cluster = await startCluster(t);
  await cluster.server.store.create(
    SecretKind,
    tlsSecret('sandbox', 'web-tls', {
      'tls.crt': leaf.certificatePem,
      'tls.key': leaf.keyPem,
      'ca.crt': leaf.caPem,
    }),
  );
  const admin = await cluster.kubeconfigFile(cluster.server.adminToken);
  const inspected = await runInProcess(runInspect, [
    'secret',
    'sandbox/web-tls',
    '--kubeconfig',
    admin,
  ]);
  t.equal(inspected.code, 0, inspected.stderr);
  t.match(inspected.stdout, /\tChain: verifies against ca\.crt/);
  // The node's service account (deploy/manifests/rbac-node.yaml) reads no Secret of a namespace.
  const node = await cluster.kubeconfigFile(NODE_TOKEN);
  const forbidden = await runInProcess(runInspect, [
    'secret',
    'sandbox/web-tls',
    '--kubeconfig',
    node,
  ]);
  t.equal(forbidden.code, 1);
  t.match(
    forbidden.stderr,
    /^cert-csi inspect: [^\n]*forbidden[^\n]*\nsee cert-csi inspect --help\n$/i,
  );
  t.notMatch(forbidden.stderr, /BEGIN/, 'no key or certificate in the error');
});
