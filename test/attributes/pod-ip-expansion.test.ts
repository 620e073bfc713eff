// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${POD_IP}` is the variable syntax under test
import t from 'tap';
import { expandPodIPs } from '../../src/attributes/pod-ip-expansion.js';
import {
  ATTRIBUTE_PREFIX,
  formatAttributeErrors,
  parseVolumeAttributes,
} from '../../src/attributes/volume-attributes.js';

// The spec parsed once (at publish, or at start) is expanded with the pod's real IPs at each
// issuance: the result must be what parsing the attributes again with those IPs gives.

const POD_CONTEXT: Readonly<Record<string, string>> = {
  'csi.storage.k8s.io/pod.name': 'web-0',
  'csi.storage.k8s.io/pod.namespace': 'shop',
  'csi.storage.k8s.io/ephemeral': 'true',
  [`${ATTRIBUTE_PREFIX}issuer-name`]: 'ca',
};

function context(attrs: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = { ...POD_CONTEXT };
  for (const [key, value] of Object.entries(attrs)) {
    out[key.includes('/') ? key : `${ATTRIBUTE_PREFIX}${key}`] = value;
  }
  return out;
}

/** The spec as publish parses it: the pod's IPs not known yet. */
function parsedOnce(volumeContext: Record<string, string>) {
  const parsed = parseVolumeAttributes(volumeContext);
  if (!parsed.ok) throw new Error(formatAttributeErrors(parsed.errors));
  return parsed.spec;
}

const manyNames = (n: number) => Array.from({ length: n }, (_, i) => `n${i}.example.com`).join(',');

t.test('expanded with the pod IPs: the spec a parse with them gives', async (t) => {
  const cases: Array<[string, Record<string, string>, string[]]> = [
    ['one IP', { 'ip-sans': '${POD_IP}' }, ['10.244.1.7']],
    ['the first of two', { 'ip-sans': '${POD_IP}' }, ['fd00::7', '10.244.1.7']],
    [
      'all of them, beside a fixed one',
      { 'ip-sans': '192.0.2.10,${POD_IPS}' },
      ['10.0.0.1', 'fd00::1'],
    ],
    ['with other SANs', { 'ip-sans': '$POD_IPS', 'dns-names': 'a.shop.svc' }, ['10.0.0.1']],
  ];
  for (const [name, attrs, podIPs] of cases) {
    const volumeContext = context(attrs);
    const reparsed = parseVolumeAttributes(volumeContext, { podIPs });
    t.ok(reparsed.ok, `${name}: valid`);
    t.strictSame(
      expandPodIPs(parsedOnce(volumeContext), podIPs),
      reparsed.ok && { ok: true, spec: reparsed.spec },
      name,
    );
  }
});

t.test('attributes invalid with the pod IPs: the message a parse with them gives', async (t) => {
  const cases: Array<[string, Record<string, string>, string[], RegExp]> = [
    [
      'a zoned address no SAN can hold',
      { 'ip-sans': '${POD_IPS}' },
      ['fd00::9', 'fe80::1%eth0'],
      /^csi\.cert-manager\.io\/ip-sans: failed to parse IP address: \["fe80::1%eth0"\]$/,
    ],
    [
      // More IPs than the worst case checked at publish (embedded mode: any number of --pod-ip).
      'more SANs than a certificate holds, named under each list, legacy keys as written',
      {
        'csi.certmanager.k8s.io/dns-names': manyNames(96),
        'ip-sans': '${POD_IPS}',
        'uri-sans': 'spiffe://shop/web',
      },
      ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4'],
      /^csi\.cert-manager\.io\/ip-sans: Too many: 101: .*; csi\.cert-manager\.io\/uri-sans: Too many: 101: .*; csi\.certmanager\.k8s\.io\/dns-names: Too many: 101/,
    ],
    [
      'too many SANs in ip-sans alone',
      { 'ip-sans': '${POD_IPS}' },
      Array.from({ length: 101 }, (_, i) => `10.0.${Math.floor(i / 200)}.${i + 1}`),
      /^csi\.cert-manager\.io\/ip-sans: Too many: 101: must have at most 100 subject alternative names/,
    ],
  ];
  for (const [name, attrs, podIPs, message] of cases) {
    const volumeContext = context(attrs);
    const reparsed = parseVolumeAttributes(volumeContext, { podIPs });
    t.notOk(reparsed.ok, `${name}: invalid`);
    const expanded = expandPodIPs(parsedOnce(volumeContext), podIPs);
    t.strictSame(
      expanded,
      { ok: false, message: reparsed.ok ? '' : formatAttributeErrors(reparsed.errors) },
      name,
    );
    t.match(!expanded.ok && expanded.message, message, `${name}: names the keys`);
  }
});

t.test('a spec whose ip-sans do not use the pod IPs is left as it is', async (t) => {
  const spec = parsedOnce(context({ 'ip-sans': '10.0.0.1' }));
  t.strictSame(expandPodIPs(spec, ['10.244.1.7']), { ok: true, spec });
});
