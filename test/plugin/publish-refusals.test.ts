// Values a later step (the CSR builder, the store's object rules, the Kubernetes API, the
// filesystem) would refuse are refused by NodePublishVolume itself, through the real socket:
// InvalidArgument naming the key, no key generated, no CertificateRequest, no volume dir.
import { X509Certificate } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import t from 'tap';
import {
  allowVolumeCa,
  embeddedCA,
  type PluginHarness,
  startPlugin,
} from '../support/plugin-harness.js';

const NAMESPACE_KEY = 'csi.storage.k8s.io/pod.namespace';
const attr = (name: string): string => `csi.cert-manager.io/${name}`;
const manyDnsNames = Array.from({ length: 10_000 }, (_, i) => `host-${i}.example.com`).join(',');

interface Refusal {
  name: string;
  /** The key the message must name. */
  key: string;
  /** Attributes on top of embeddedCA(); pod info overrides go in too. */
  attributes?: Record<string, string>;
  target?: (dir: string) => string;
  /** The limit the message must state, when the case is about a limit. */
  says?: RegExp;
}

const refusals: Refusal[] = [
  { name: 'upper-case namespace', key: NAMESPACE_KEY, attributes: { [NAMESPACE_KEY]: 'UPPER' } },
  { name: 'namespace with a slash', key: NAMESPACE_KEY, attributes: { [NAMESPACE_KEY]: 'a/b' } },
  {
    name: '70-character namespace',
    key: NAMESPACE_KEY,
    attributes: { [NAMESPACE_KEY]: 'n'.repeat(70) },
    says: /63/,
  },
  {
    name: 'pod name that is no object name',
    key: 'csi.storage.k8s.io/pod.name',
    attributes: { 'csi.storage.k8s.io/pod.name': 'App_0' },
  },
  {
    name: 'service account name that is no object name',
    key: 'csi.storage.k8s.io/serviceAccount.name',
    attributes: { 'csi.storage.k8s.io/serviceAccount.name': 'x'.repeat(254) },
    says: /253/,
  },
  {
    name: '1,000-character pod uid',
    key: 'csi.storage.k8s.io/pod.uid',
    attributes: { 'csi.storage.k8s.io/pod.uid': 'u'.repeat(1000) },
    says: /128/,
  },
  {
    name: '100,000-character common name',
    key: attr('common-name'),
    attributes: { [attr('common-name')]: 'c'.repeat(100_000) },
    says: /64/,
  },
  {
    name: '10,000 DNS names',
    key: attr('dns-names'),
    attributes: { [attr('dns-names')]: manyDnsNames },
    says: /100/,
  },
  {
    name: 'a DNS name that is not a host name',
    key: attr('dns-names'),
    attributes: { [attr('dns-names')]: 'ok.example.com,bad name.example.com' },
  },
  {
    name: 'a 3,000-character URI SAN',
    key: attr('uri-sans'),
    attributes: { [attr('uri-sans')]: `spiffe://cluster.local/${'p'.repeat(3000)}` },
    says: /2048/,
  },
  {
    name: 'a 1,000-character organization',
    key: attr('organizations'),
    attributes: { [attr('organizations')]: 'o'.repeat(1000) },
    says: /128/,
  },
  {
    name: 'a 10,000-character literal subject',
    key: attr('literal-subject'),
    attributes: { [attr('literal-subject')]: `CN=${'l'.repeat(10_000)}` },
  },
  // Each of these was signed and then failed "unreadable certificate" forever.
  ...['1.2.3=#0101ff', 'CN=#0101ff', 'UID=#0101ff', '1.2.3=#0500', 'CN=#130140', 'CN=#1e0161'].map(
    (value): Refusal => ({
      name: `literal subject ${value}`,
      key: attr('literal-subject'),
      attributes: { [attr('literal-subject')]: value },
      says: /the hex value for "[^"]+" is /,
    }),
  ),
  // Valid with the placeholder 192.0.2.1, invalid for an IPv6 or a long IPv4 pod.
  {
    name: 'the pod IP in a DNS name',
    key: attr('dns-names'),
    attributes: { [attr('dns-names')]: `ip-${'$'}{POD_IP}.example.com` },
    says: /cannot be used in dns-names: .*IPv6/,
  },
  {
    name: 'an IP SAN that only the longest IPv4 address breaks',
    key: attr('ip-sans'),
    attributes: {
      [attr('ip-sans')]: `${'$'}{POD_IP}1`,
      'csi.storage.k8s.io/pod.ips': '10.0.0.1',
    },
    says: /with the pod IPs 255\.255\.255\.255,/,
  },
  {
    name: 'issuer name that is a path',
    key: attr('issuer-name'),
    attributes: { [attr('issuer-name')]: '../../etc/passwd' },
  },
  {
    name: '5,000-character issuer name',
    key: attr('issuer-name'),
    attributes: { [attr('issuer-name')]: 'i'.repeat(5000) },
    says: /253/,
  },
  {
    name: 'issuer kind cert-manager does not serve',
    key: attr('issuer-kind'),
    attributes: { [attr('issuer-kind')]: 'Secret' },
  },
  {
    name: 'issuer group that is no API group',
    key: attr('issuer-group'),
    attributes: { [attr('issuer-group')]: 'Example Com' },
  },
  {
    name: 'annotations larger than the API server takes',
    key: 'example.com/big',
    attributes: { 'example.com/big': 'v'.repeat(300 * 1024) },
    says: /262144/,
  },
  {
    name: 'target path with NUL',
    key: 'target_path',
    target: (dir) => join(dir, 'pods', 'nul\0x', 'mount'),
  },
  {
    name: 'target path of 5,000 bytes',
    key: 'target_path',
    target: (dir) => join(dir, ...Array.from({ length: 50 }, () => 'd'.repeat(99))),
    says: /4096/,
  },
  {
    name: 'target path with a 300-byte segment',
    key: 'target_path',
    target: (dir) => join(dir, 's'.repeat(300), 'mount'),
    says: /255/,
  },
];

async function refusalOf(
  p: PluginHarness,
  volumeId: string,
  attributes: Record<string, string>,
  target?: string,
) {
  return p.publish(volumeId, embeddedCA(attributes), target ? { target } : {}).then(
    () => undefined,
    (e: unknown) => e as { code?: number; details?: string },
  );
}

t.test('values a later step would refuse are InvalidArgument before any work', async (t) => {
  const p = await startPlugin(t);
  const before = await readdir(p.dir);
  const rootBefore = await readdir(p.dataRoot.root);
  for (const [i, refusal] of refusals.entries()) {
    const target = refusal.target?.(p.dir);
    const err = await refusalOf(p, `csi-refused-${i}`, refusal.attributes ?? {}, target);
    t.equal(err?.code, status.INVALID_ARGUMENT, `${refusal.name}: InvalidArgument`);
    t.ok(err?.details?.includes(`${refusal.key}: `), `${refusal.name}: names ${refusal.key}`);
    if (refusal.says) t.match(err?.details, refusal.says, `${refusal.name}: states the limit`);
    t.ok((err?.details?.length ?? 0) < 1024, `${refusal.name}: a short message`);
    t.same(await p.requests(), [], `${refusal.name}: no CertificateRequest`);
    t.same(await p.dataRoot.listVolumeIds(), [], `${refusal.name}: no volume dir`);
  }
  t.same(await readdir(p.dataRoot.root), rootBefore, 'nothing new in the data root');
  t.same(await readdir(p.dir), before, 'nothing new next to the data root');
});

t.test('values at the limits are published', async (t) => {
  const p = await startPlugin(t);
  const dnsNames = Array.from({ length: 100 }, (_, i) => `h${i}.${'d'.repeat(60)}.example.com`);
  await p.publish(
    'csi-at-limits',
    embeddedCA({
      [NAMESPACE_KEY]: 'n'.repeat(63),
      'csi.storage.k8s.io/pod.name': `app.${'p'.repeat(249)}`,
      [attr('common-name')]: 'c'.repeat(64),
      [attr('dns-names')]: ['*.example.com', ...dnsNames.slice(1)].join(','),
      [attr('key-algorithm')]: 'ECDSA',
    }),
    { target: join(p.dir, 's'.repeat(255), 'mount') },
  );
  const [request] = await p.requests();
  t.equal(request?.metadata.namespace, 'n'.repeat(63), 'issued in the 63-character namespace');
});

const LONG = 100_000;

t.test('a 100,000-character bad value gets a short message naming its key', async (t) => {
  const p = await startPlugin(t);
  const bad: Record<string, string> = {
    [attr('key-usages')]: 'k'.repeat(LONG),
    [attr('key-size')]: '9'.repeat(LONG),
    [attr('is-ca')]: 'y'.repeat(LONG),
    [attr('key-algorithm')]: 'a'.repeat(LONG),
    [attr('ip-sans')]: '1'.repeat(LONG),
    [attr('organizations')]: `"${'q'.repeat(LONG)}`,
    [attr('certificate-file')]: `/${'f'.repeat(LONG)}`,
    [attr('fs-group')]: 'g'.repeat(LONG),
    [attr('uri-sans')]: `${'$'}{${'V'.repeat(LONG)}}`,
  };
  for (const [key, value] of Object.entries(bad)) {
    const err = await refusalOf(p, 'csi-long', { [key]: value });
    t.equal(err?.code, status.INVALID_ARGUMENT, `${key}: InvalidArgument`);
    t.ok(err?.details?.startsWith(`${key}: `), `${key}: the message names it`);
    t.ok((err?.details?.length ?? LONG) < 1024, `${key}: ${err?.details?.length} characters`);
    t.match(err?.details, /…\(\d+ characters\)/, `${key}: says the value was shortened`);
  }
  const err = await refusalOf(p, 'csi-long', bad);
  t.ok(
    (err?.details?.length ?? LONG) < 1024 * Object.keys(bad).length,
    'all bad keys at once stay under 1 KB per key',
  );
  const unknownKey = attr('x'.repeat(LONG));
  const unknown = await refusalOf(p, 'csi-long', { [unknownKey]: 'v' });
  t.ok((unknown?.details?.length ?? LONG) < 1024, 'a long unknown key is shortened too');
  t.same(await p.dataRoot.listVolumeIds(), [], 'no volume dir');
  t.same(
    await p.client.identityCall('Probe'),
    { ready: { value: true } },
    'the channel still answers',
  );
});

// In embedded mode the node reads the issuer, so a CA volume its issuer does
// not allow is refused at publish (PermissionDenied, as the approver's denial in Kubernetes
// mode), before any key, request or file.
t.test('is-ca without the issuer’s consent is PermissionDenied before any work', async (t) => {
  const p = await startPlugin(t);
  const rootBefore = await readdir(p.dataRoot.root);
  for (const key of [attr('is-ca'), 'csi.certmanager.k8s.io/is-ca']) {
    const err = await refusalOf(p, 'csi-ca', { [key]: 'true' });
    t.equal(err?.code, status.PERMISSION_DENIED, `${key}: PermissionDenied`);
    t.equal(
      err?.details,
      `${key}: "true" asks for a CA certificate: ClusterIssuer "embedded-ca" does not allow CA certificates for CSI volumes: set the annotation cert-csi.io/allow-is-ca: "true" on it to allow them`,
    );
    t.same(await p.requests(), [], `${key}: no CertificateRequest`);
    t.same(await p.dataRoot.listVolumeIds(), [], `${key}: no volume dir`);
    t.same(await readdir(p.dataRoot.root), rootBefore, `${key}: nothing new in the data root`);
  }
  const missing = await refusalOf(p, 'csi-ca', {
    [attr('is-ca')]: 'true',
    [attr('issuer-name')]: 'nowhere',
  });
  // An issuer the store lacks is refused first, as missing (FailedPrecondition): none can come.
  t.equal(missing?.code, status.FAILED_PRECONDITION, 'an issuer that does not exist is refused');
  t.match(missing?.details, /^ClusterIssuer "nowhere" not found; /);

  await allowVolumeCa(p);
  const { target } = await p.publish('csi-ca', embeddedCA({ [attr('is-ca')]: 'true' }));
  const certificate = new X509Certificate(await readFile(join(target, 'tls.crt')));
  t.ok(certificate.ca, 'with the annotation the volume gets its CA certificate');
  t.equal((await p.requests()).length, 1, 'one request');
});
