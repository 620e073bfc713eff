// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${NAME}` is the variable syntax under test
import t from 'tap';
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

t.test('${POD_IP} and ${POD_IPS} expand in ip-sans and dns-names', async (t) => {
  const parsed = parseVolumeAttributes(
    context({
      'ip-sans': '${POD_IPS},192.0.2.10',
      'dns-names': '${POD_NAME}.shop.svc,$POD_IP.nip.io',
    }),
    { podIPs: DUAL_STACK },
  );
  t.ok(parsed.ok);
  if (!parsed.ok) return;
  t.same(parsed.spec.ipAddresses, [...DUAL_STACK, '192.0.2.10'], 'one SAN per pod IP');
  t.same(parsed.spec.dnsNames, ['web-0.shop.svc', '10.244.1.7.nip.io'], 'POD_IP is the first');
  t.same(parsed.spec.podIPs, DUAL_STACK, 'the spec records the IPs it was expanded with');
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
  const parsed = parseVolumeAttributes(
    context({
      'common-name': '${POD_IP}',
      'uri-sans': 'spiffe://x/$POD_IPS',
      'ip-sans': '$POD_NAME',
      'dns-names': '${POD_ADDRESS}.svc',
    }),
    { podIPs: DUAL_STACK },
  );
  t.notOk(parsed.ok);
  if (parsed.ok) return;
  const four = 'POD_NAME POD_NAMESPACE POD_UID SERVICE_ACCOUNT_NAME';
  t.same(parsed.errors.map((e) => `${e.key.slice(ATTRIBUTE_PREFIX.length)}: ${e.message}`).sort(), [
    `common-name: undefined variable "POD_IP", known variables: [${four}]`,
    `dns-names: undefined variable "POD_ADDRESS", known variables: [${four} POD_IP POD_IPS]`,
    'ip-sans: undefined variable "POD_NAME", known variables: [POD_IP POD_IPS]',
    `uri-sans: undefined variable "POD_IPS", known variables: [${four}]`,
  ]);
});

t.test('referencedVariables reads names as os.Expand does', async (t) => {
  t.same(referencedVariables('${POD_IP}.x,$POD_IPS-$1${}$'), ['POD_IP', 'POD_IPS', '1']);
  t.same(referencedVariables('no variables'), []);
});
