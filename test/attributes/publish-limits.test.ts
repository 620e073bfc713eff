// Every limit NodePublishVolume enforces, at the boundary: the limit is accepted, one more is
// refused with a message naming the key and stating the number.
import t from 'tap';
import { ECHO_LIMIT, quoted, shortened } from '../../src/api/echoed-value.js';
import { formatAttributeErrors } from '../../src/attributes/attribute-errors.js';
import { parseVolumeAttributes } from '../../src/attributes/volume-attributes.js';
import { targetPathProblems } from '../../src/driver/target-path.js';

const POD: Readonly<Record<string, string>> = {
  'csi.storage.k8s.io/ephemeral': 'true',
  'csi.storage.k8s.io/pod.name': 'app-0',
  'csi.storage.k8s.io/pod.namespace': 'sandbox',
  'csi.storage.k8s.io/pod.uid': '0a99d1e4-5b1c-4c8a-9f0e-2f6d7f9b1c11',
  'csi.storage.k8s.io/serviceAccount.name': 'app',
  'csi.cert-manager.io/issuer-name': 'ca',
};

const attr = (name: string): string => `csi.cert-manager.io/${name}`;
const list = (n: number, item: (i: number) => string): string =>
  Array.from({ length: n }, (_, i) => item(i)).join(',');
// A host name of exactly n characters: labels of 63 joined by dots.
function hostName(n: number): string {
  const labels: string[] = [];
  let left = n;
  while (left > 0) {
    const size = Math.min(63, left);
    labels.push('h'.repeat(size));
    left -= size + 1;
  }
  return labels.join('.').slice(0, n).replace(/\.$/, 'h');
}

interface Limit {
  name: string;
  key: string;
  /** The volume context additions at the limit and one past it. */
  at: Record<string, string>;
  over: Record<string, string>;
  says: RegExp;
}

const limits: Limit[] = [
  {
    name: 'namespace: 63 characters',
    key: 'csi.storage.k8s.io/pod.namespace',
    at: { 'csi.storage.k8s.io/pod.namespace': 'n'.repeat(63) },
    over: { 'csi.storage.k8s.io/pod.namespace': 'n'.repeat(64) },
    says: /may not be more than 63 characters \(it has 64\)/,
  },
  {
    name: 'pod name: 253 characters',
    key: 'csi.storage.k8s.io/pod.name',
    at: { 'csi.storage.k8s.io/pod.name': hostName(253) },
    over: { 'csi.storage.k8s.io/pod.name': hostName(254) },
    says: /253 characters/,
  },
  {
    name: 'service account: 253 characters',
    key: 'csi.storage.k8s.io/serviceAccount.name',
    at: { 'csi.storage.k8s.io/serviceAccount.name': hostName(253) },
    over: { 'csi.storage.k8s.io/serviceAccount.name': hostName(254) },
    says: /253 characters/,
  },
  {
    name: 'pod uid: 128 characters',
    key: 'csi.storage.k8s.io/pod.uid',
    at: { 'csi.storage.k8s.io/pod.uid': 'u'.repeat(128) },
    over: { 'csi.storage.k8s.io/pod.uid': 'u'.repeat(129) },
    says: /128 characters/,
  },
  {
    name: 'issuer name: 253 characters',
    key: attr('issuer-name'),
    at: { [attr('issuer-name')]: hostName(253) },
    over: { [attr('issuer-name')]: hostName(254) },
    says: /253 characters/,
  },
  {
    name: 'issuer group: 253 characters',
    key: attr('issuer-group'),
    at: { [attr('issuer-group')]: hostName(253), [attr('issuer-kind')]: 'MyIssuer' },
    over: { [attr('issuer-group')]: hostName(254), [attr('issuer-kind')]: 'MyIssuer' },
    says: /253 characters/,
  },
  {
    name: 'external issuer kind: 63 characters',
    key: attr('issuer-kind'),
    at: { [attr('issuer-group')]: 'example.io', [attr('issuer-kind')]: `K${'k'.repeat(62)}` },
    over: { [attr('issuer-group')]: 'example.io', [attr('issuer-kind')]: `K${'k'.repeat(63)}` },
    says: /at most 63 characters/,
  },
  {
    name: 'common name: 64 characters, counted as characters after expansion',
    key: attr('common-name'),
    at: { [attr('common-name')]: `${'é'.repeat(58)}.$POD_NAME` },
    over: { [attr('common-name')]: `${'é'.repeat(59)}.$POD_NAME` },
    says: /may not be more than 64 characters \(it has 65\)/,
  },
  {
    name: 'a subject value: 128 characters',
    key: attr('localities'),
    at: { [attr('localities')]: `a,${'l'.repeat(128)}` },
    over: { [attr('localities')]: `a,${'l'.repeat(129)}` },
    says: /128 characters/,
  },
  {
    name: 'serial number: 128 characters',
    key: attr('serialnumber'),
    at: { [attr('serialnumber')]: 's'.repeat(128) },
    over: { [attr('serialnumber')]: 's'.repeat(129) },
    says: /128 characters/,
  },
  {
    name: 'a subject list: 100 values',
    key: attr('organizationalunits'),
    at: { [attr('organizationalunits')]: list(100, (i) => `ou${i}`) },
    over: { [attr('organizationalunits')]: list(101, (i) => `ou${i}`) },
    says: /Too many: 101: must have at most 100 values/,
  },
  {
    name: 'literal subject: 4096 characters',
    key: attr('literal-subject'),
    at: { [attr('literal-subject')]: `O=${'o'.repeat(4094)}` },
    over: { [attr('literal-subject')]: `O=${'o'.repeat(4095)}` },
    says: /4096 characters/,
  },
  {
    name: 'a DNS name: 253 characters',
    key: attr('dns-names'),
    at: { [attr('dns-names')]: hostName(253) },
    over: { [attr('dns-names')]: hostName(254) },
    says: /253 characters/,
  },
  {
    name: 'a DNS label: 63 characters',
    key: attr('dns-names'),
    at: { [attr('dns-names')]: `*.${'l'.repeat(63)}.example.com` },
    over: { [attr('dns-names')]: `*.${'l'.repeat(64)}.example.com` },
    says: /each at most 63 characters/,
  },
  {
    name: 'a URI: 2048 characters',
    key: attr('uri-sans'),
    at: { [attr('uri-sans')]: `spiffe://x/${'p'.repeat(2037)}` },
    over: { [attr('uri-sans')]: `spiffe://x/${'p'.repeat(2038)}` },
    says: /2048 characters/,
  },
  {
    name: 'SANs: 100 together, naming every SAN key',
    key: attr('dns-names'),
    at: {
      [attr('dns-names')]: list(50, (i) => `h${i}.example.com`),
      [attr('ip-sans')]: list(50, (i) => `10.0.0.${i}`),
    },
    over: {
      [attr('dns-names')]: list(50, (i) => `h${i}.example.com`),
      [attr('ip-sans')]: list(51, (i) => `10.0.0.${i}`),
    },
    says: /dns-names: Too many: 101: must have at most 100 subject alternative names.*; csi\.cert-manager\.io\/ip-sans: Too many: 101/,
  },
  {
    name: 'key usages: as many as there are usages',
    key: attr('key-usages'),
    at: { [attr('key-usages')]: list(23, () => 'any') },
    over: { [attr('key-usages')]: list(24, () => 'any') },
    says: /Too many: 24: must have at most 23 usages/,
  },
  {
    name: 'annotations: 262144 bytes together',
    key: 'example.com/b',
    at: { 'example.com/a': 'a', 'example.com/b': 'b'.repeat(262144 - 27) },
    over: { 'example.com/a': 'a', 'example.com/b': 'b'.repeat(262144 - 26) },
    says: /262144 bytes in total \(they have 262145/,
  },
];

for (const limit of limits) {
  t.test(limit.name, async (t) => {
    const at = parseVolumeAttributes({ ...POD, ...limit.at });
    t.same(at.ok ? [] : at.errors, [], 'the limit is accepted');
    const over = parseVolumeAttributes({ ...POD, ...limit.over });
    t.notOk(over.ok, 'one more is refused');
    if (over.ok) return;
    const message = formatAttributeErrors(over.errors);
    t.ok(message.startsWith(`${limit.key}: `), `names ${limit.key}: ${message.slice(0, 200)}`);
    t.match(message, limit.says, 'states the limit');
  });
}

t.test('issuer kinds: cert-manager.io serves Issuer and ClusterIssuer only', async (t) => {
  const kinds = (kind: string, group?: string) =>
    parseVolumeAttributes({
      ...POD,
      [attr('issuer-kind')]: kind,
      ...(group ? { [attr('issuer-group')]: group } : {}),
    });
  t.ok(kinds('ClusterIssuer').ok);
  t.ok(kinds('').ok, 'empty is Issuer');
  t.ok(kinds('AWSPCAClusterIssuer', 'awspca.cert-manager.io').ok, 'external kinds elsewhere');
  const bad = kinds('issuer');
  t.match(
    bad.ok ? '' : formatAttributeErrors(bad.errors),
    /^csi\.cert-manager\.io\/issuer-kind: Unsupported value: "issuer": supported values: "Issuer", "ClusterIssuer"$/,
  );
  const badExternal = kinds('My_Issuer', 'example.io');
  t.match(badExternal.ok ? '' : formatAttributeErrors(badExternal.errors), /issuer-kind/);
});

t.test('DNS names: host names with an optional leading wildcard', async (t) => {
  const dns = (names: string) => parseVolumeAttributes({ ...POD, [attr('dns-names')]: names });
  t.ok(dns('localhost,*.example.com,A-1.Example.COM,xn--bcher-kva.example').ok);
  for (const bad of ['a..b', '-a.example', 'a-.example', 'a_b.example', 'x.*.example', 'a.com.']) {
    t.notOk(dns(bad).ok, `${bad} is refused`);
  }
});

t.test('target paths: absolute, no NUL, under PATH_MAX, segments under NAME_MAX', async (t) => {
  const path = (bytes: number): string => {
    const segments: string[] = [];
    let left = bytes;
    while (left > 0) {
      const size = Math.min(200, left - 1);
      segments.push('p'.repeat(size));
      left -= size + 1;
    }
    return `/${segments.join('/')}`;
  };
  t.equal(path(4095).length, 4095);
  t.same(targetPathProblems(path(4095)), [], '4095 bytes are accepted');
  t.match(targetPathProblems(path(4096)), [/shorter than 4096 bytes \(PATH_MAX\), it has 4096/]);
  t.same(targetPathProblems(`/pods/${'s'.repeat(255)}/mount`), [], 'a 255-byte segment');
  t.match(targetPathProblems(`/pods/${'é'.repeat(128)}/mount`), [/at most 255 bytes.*has 256/]);
  t.same(targetPathProblems(''), ['required']);
  t.same(targetPathProblems('pods/x'), ['must be an absolute path']);
  t.same(targetPathProblems('/pods/a\0b'), ['must not contain NUL characters']);
});

t.test('values are echoed shortened to 100 characters', async (t) => {
  t.equal(ECHO_LIMIT, 100);
  t.equal(shortened('x'.repeat(100)), 'x'.repeat(100), '100 characters are echoed whole');
  t.equal(shortened('x'.repeat(101)), `${'x'.repeat(100)}…(101 characters)`);
  t.equal(shortened('😀'.repeat(100)), '😀'.repeat(100), 'characters are code points');
  t.equal(shortened('😀'.repeat(101)), `${'😀'.repeat(100)}…(101 characters)`);
  t.equal(quoted('a"b'), '"a\\"b"');
  t.equal(quoted('q'.repeat(150)), `"${'q'.repeat(100)}"…(150 characters)`);
});

t.test('at most three messages per key, then how many more', async (t) => {
  const result = parseVolumeAttributes({
    ...POD,
    [attr('key-usages')]: 'a,b,c,d,e',
    [attr('ip-sans')]: 'w,x,y,z',
    [attr('uri-sans')]: '$A$B$C$D',
    [attr('literal-subject')]: '$A$B$C',
  });
  t.notOk(result.ok);
  if (result.ok) return;
  t.equal(
    formatAttributeErrors(result.errors),
    [
      'csi.cert-manager.io/ip-sans: failed to parse IP address: ["w","x","y"] and 1 more',
      'csi.cert-manager.io/key-usages: Invalid value: "a": not a valid key usage',
      'csi.cert-manager.io/key-usages: Invalid value: "b": not a valid key usage',
      'csi.cert-manager.io/key-usages: Invalid value: "c": not a valid key usage',
      'csi.cert-manager.io/key-usages: and 2 more errors',
      'csi.cert-manager.io/literal-subject: undefined variable "A", undefined variable "B", undefined variable "C", known variables: [POD_NAME POD_NAMESPACE POD_UID SERVICE_ACCOUNT_NAME]',
      'csi.cert-manager.io/uri-sans: undefined variable "A", undefined variable "B", undefined variable "C", and 1 more, known variables: [POD_NAME POD_NAMESPACE POD_UID SERVICE_ACCOUNT_NAME]',
    ].join('; '),
  );
});

t.test('one more error, and many bad URIs in one message', async (t) => {
  const result = parseVolumeAttributes({
    ...POD,
    [attr('key-usages')]: 'a,b,c,d',
    [attr('uri-sans')]: 'w,x,y,z',
  });
  t.notOk(result.ok);
  if (result.ok) return;
  const message = formatAttributeErrors(result.errors);
  t.match(message, /csi\.cert-manager\.io\/key-usages: and 1 more error;/);
  t.match(
    message,
    /csi\.cert-manager\.io\/uri-sans: invalid URI "w", invalid URI "x", invalid URI "y", and 1 more$/,
  );
});
