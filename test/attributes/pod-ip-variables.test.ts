// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${NAME}` is the variable syntax under test
import { isIP } from 'node:net';
import t from 'tap';
import {
  LONGEST_IPV4,
  LONGEST_IPV6,
  POD_IP_WORST_CASES,
} from '../../src/attributes/identity-attributes.js';
import { referencedVariables } from '../../src/attributes/variable-expansion.js';
import {
  ATTRIBUTE_PREFIX,
  POD_IP_PLACEHOLDER,
  parseVolumeAttributes,
} from '../../src/attributes/volume-attributes.js';

const POD_CONTEXT: Readonly<Record<string, string>> = {
  'csi.storage.k8s.io/pod.name': 'web-0',
  'csi.storage.k8s.io/pod.namespace': 'shop',
  'csi.storage.k8s.io/pod.uid': 'f3c1c7a2-1111-4222-8333-444455556666',
  'csi.storage.k8s.io/serviceAccount.name': 'web',
  'csi.storage.k8s.io/ephemeral': 'true',
  [`${ATTRIBUTE_PREFIX}issuer-name`]: 'ca',
};

function context(attrs: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = { ...POD_CONTEXT };
  for (const [name, value] of Object.entries(attrs)) out[`${ATTRIBUTE_PREFIX}${name}`] = value;
  return out;
}

const DUAL_STACK = ['10.244.1.7', 'fd00:10:244:1::7'];

t.test('${POD_IP} and ${POD_IPS} expand in ip-sans', async (t) => {
  const parsed = parseVolumeAttributes(
    context({
      'ip-sans': '${POD_IPS},192.0.2.10',
      'dns-names': '${POD_NAME}.shop.svc',
    }),
    { podIPs: DUAL_STACK },
  );
  t.ok(parsed.ok);
  if (!parsed.ok) return;
  t.same(parsed.spec.ipAddresses, [...DUAL_STACK, '192.0.2.10'], 'one SAN per pod IP');
  t.same(parsed.spec.dnsNames, ['web-0.shop.svc']);
  t.same(parsed.spec.podIPs, DUAL_STACK, 'the spec records the IPs it was expanded with');
  const first = parseVolumeAttributes(context({ 'ip-sans': '${POD_IP}' }), { podIPs: DUAL_STACK });
  t.same(first.ok && first.spec.ipAddresses, ['10.244.1.7'], 'POD_IP is the first');
});

// The pod's address family is unknown at publish, and an IPv6 address has colons, which no
// DNS name can hold: the variables are refused in dns-names whatever the pod has.
t.test('dns-names refuses ${POD_IP} and ${POD_IPS}, known IPs or not', async (t) => {
  const cases: Array<[string, string]> = [
    ['ip-${POD_IP}.example.com', '${POD_IP}'],
    ['$POD_IP.nip.io', '${POD_IP}'],
    ['${POD_IPS}', '${POD_IPS}'],
    ['${POD_NAME}.shop.svc,${POD_IP}.a,${POD_IPS}.b,${POD_IP}.c', '${POD_IP} and ${POD_IPS}'],
  ];
  for (const [dnsNames, used] of cases) {
    for (const podIPs of [[], ['10.244.1.7'], DUAL_STACK]) {
      const parsed = parseVolumeAttributes(context({ 'dns-names': dnsNames }), { podIPs });
      t.notOk(parsed.ok, `${dnsNames} with [${podIPs}]: refused`);
      if (parsed.ok) continue;
      t.same(
        parsed.errors,
        [
          {
            key: `${ATTRIBUTE_PREFIX}dns-names`,
            message: `${used} cannot be used in dns-names: the pod's address may be IPv6, whose ':' no DNS name can hold, and its family is known only at issuance; put the pod's IP in ip-sans`,
          },
        ],
        `${dnsNames}: one error naming dns-names`,
      );
    }
  }
  const legacy = parseVolumeAttributes({
    ...POD_CONTEXT,
    'csi.certmanager.k8s.io/dns-names': '${POD_IP}.nip.io',
  });
  t.same(
    !legacy.ok && legacy.errors.map((e) => e.key),
    ['csi.certmanager.k8s.io/dns-names'],
    'the legacy key is named as written',
  );
});

t.test('the worst cases are the longest address of each family', async (t) => {
  t.equal(LONGEST_IPV4.length, 15);
  t.equal(isIP(LONGEST_IPV4), 4);
  t.equal(LONGEST_IPV6.length, 45, 'INET6_ADDRSTRLEN - 1: no IPv6 text is longer');
  t.equal(isIP(LONGEST_IPV6), 6);
  t.same(
    POD_IP_WORST_CASES.map((w) => w.POD_IP),
    [LONGEST_IPV4, LONGEST_IPV6],
  );
  for (const worst of POD_IP_WORST_CASES) {
    t.same(
      worst.POD_IPS.split(',')
        .map((ip) => isIP(ip))
        .sort(),
      [4, 6],
      'POD_IPS: a dual-stack pod, one address per family',
    );
  }
});

const WORST_PREFIX =
  /^with the pod IPs (255\.255\.255\.255,ffff:|ffff:)\S+ \(the longest of each family; the real ones are known only at issuance\): /;

// What the placeholder 192.0.2.1 let through and a real pod would then fail with forever.
t.test('ip-sans is checked against every worst case at publish', async (t) => {
  const hundredNames = (n: number) =>
    Array.from({ length: n }, (_, i) => `h${i}.example.com`).join(',');
  // Each passed with the placeholder and fails with a worst case only (the message says so).
  const refused: Array<[string, Record<string, string>, string[], RegExp]> = [
    ['a digit after an IPv4', { 'ip-sans': '${POD_IP}1' }, ['ip-sans'], /"255\.255\.255\.2551"/],
    ['an IPv6 prefix', { 'ip-sans': '::${POD_IP}' }, ['ip-sans'], /"::ffff:ffff:/],
    [
      '99 DNS names and a dual-stack pod: 101 SANs',
      { 'dns-names': hundredNames(99), 'ip-sans': '${POD_IPS}' },
      ['dns-names', 'ip-sans'],
      /Too many: 101: must have at most 100/,
    ],
  ];
  for (const [name, attrs, keys, detail] of refused) {
    const parsed = parseVolumeAttributes(context(attrs));
    t.notOk(parsed.ok, `${name}: refused at publish`);
    if (parsed.ok) continue;
    t.same(
      [...new Set(parsed.errors.map((e) => e.key.slice(ATTRIBUTE_PREFIX.length)))].sort(),
      keys,
      `${name}: names ${keys.join(' and ')}`,
    );
    t.ok(
      parsed.errors.every((e) => WORST_PREFIX.test(e.message)),
      `${name}: each message says which pod IPs fail`,
    );
    t.ok(
      parsed.errors.some((e) => detail.test(e.message)),
      `${name}: and how`,
    );
  }

  const accepted: Array<[string, Record<string, string>]> = [
    ['the variable alone', { 'ip-sans': '${POD_IP}' }],
    ['every IP', { 'ip-sans': '${POD_IPS},10.0.0.1' }],
    [
      '98 DNS names and a dual-stack pod: 100 SANs',
      { 'dns-names': hundredNames(98), 'ip-sans': '${POD_IPS}' },
    ],
  ];
  const pods = [
    ['10.0.0.1'],
    [LONGEST_IPV4],
    ['fd00::1'],
    [LONGEST_IPV6],
    ['::ffff:10.0.0.1'],
    DUAL_STACK,
    [LONGEST_IPV6, LONGEST_IPV4],
  ];
  for (const [name, attrs] of accepted) {
    t.ok(parseVolumeAttributes(context(attrs)).ok, `${name}: accepted at publish`);
    for (const podIPs of pods) {
      const later = parseVolumeAttributes(context(attrs), { podIPs });
      t.ok(later.ok, `${name}: still valid once the pod has [${podIPs}]`);
    }
  }
});

t.test('an error every worst case shares is reported once, as found', async (t) => {
  const parsed = parseVolumeAttributes(context({ 'ip-sans': '${POD_IP},10.0.0.300' }));
  t.same(!parsed.ok && parsed.errors.map((e) => e.message), [
    'failed to parse IP address: ["10.0.0.300"]',
  ]);
});

t.test('without the pod IPs the attributes are still checked, and the spec waits', async (t) => {
  const parsed = parseVolumeAttributes(context({ 'ip-sans': '${POD_IP}' }));
  t.ok(parsed.ok, 'valid at publish');
  if (!parsed.ok) return;
  t.same(parsed.spec.podIPs, [], 'empty: the pod IPs are not known yet');
  t.same(parsed.spec.ipAddresses, [POD_IP_PLACEHOLDER], 'a placeholder, used only to validate');

  const bad = parseVolumeAttributes(context({ 'ip-sans': '${POD_IP},10.0.0.300' }));
  t.notOk(bad.ok, 'a bad address next to the variable is refused at publish');
  if (!bad.ok) {
    t.same(
      bad.errors.map((e) => e.message),
      ['failed to parse IP address: ["10.0.0.300"]'],
    );
  }
});

t.test('volumes not using them carry no pod IPs', async (t) => {
  const parsed = parseVolumeAttributes(context({ 'ip-sans': '10.0.0.1' }), {
    podIPs: DUAL_STACK,
  });
  t.ok(parsed.ok);
  if (parsed.ok) t.equal(parsed.spec.podIPs, undefined);
});

t.test('elsewhere they stay undefined variables; each key lists what it offers', async (t) => {
  // No attribute but ip-sans offers them, so no length can depend on the pod's address.
  const parsed = parseVolumeAttributes(
    context({
      'common-name': '${POD_IP}',
      'uri-sans': 'spiffe://x/$POD_IPS',
      'ip-sans': '$POD_NAME',
      'dns-names': '${POD_ADDRESS}.svc',
      'literal-subject': 'CN=${POD_IP}',
      organizations: '$POD_IPS',
    }),
    { podIPs: DUAL_STACK },
  );
  t.notOk(parsed.ok);
  if (parsed.ok) return;
  const four = 'POD_NAME POD_NAMESPACE POD_UID SERVICE_ACCOUNT_NAME';
  t.same(parsed.errors.map((e) => `${e.key.slice(ATTRIBUTE_PREFIX.length)}: ${e.message}`).sort(), [
    `common-name: undefined variable "POD_IP", known variables: [${four}]`,
    `dns-names: undefined variable "POD_ADDRESS", known variables: [${four}]`,
    'ip-sans: undefined variable "POD_NAME", known variables: [POD_IP POD_IPS]',
    `literal-subject: undefined variable "POD_IP", known variables: [${four}]`,
    `organizations: undefined variable "POD_IPS", known variables: [${four}]`,
    `uri-sans: undefined variable "POD_IPS", known variables: [${four}]`,
  ]);
});

t.test('referencedVariables reads names as os.Expand does', async (t) => {
  t.same(referencedVariables('${POD_IP}.x,$POD_IPS-$1${}$'), ['POD_IP', 'POD_IPS', '1']);
  t.same(referencedVariables('no variables'), []);
});
