import t from 'tap';
import { describeTrustBundleSource } from '../../src/api/trust-bundle-source.js';
import { parseTrustBundleSource } from '../../src/attributes/trust-bundle-attribute.js';
import {
  formatAttributeErrors,
  parseVolumeAttributes,
} from '../../src/attributes/volume-attributes.js';

const POD_CONTEXT = {
  'csi.storage.k8s.io/pod.name': 'app-0',
  'csi.storage.k8s.io/pod.namespace': 'shop',
  'csi.storage.k8s.io/pod.uid': 'uid-1',
  'csi.storage.k8s.io/serviceAccount.name': 'app',
  'csi.storage.k8s.io/ephemeral': 'true',
  'csi.cert-manager.io/issuer-name': 'ca',
};

t.test(
  'every form parses to its source, in the pod namespace where it is namespaced',
  async (t) => {
    const cases: Array<[string, unknown, string]> = [
      [
        'configmap:roots/ca.crt',
        { kind: 'configmap', namespace: 'shop', name: 'roots', key: 'ca.crt' },
        'configmap:shop/roots/ca.crt',
      ],
      [
        'clustertrustbundle:clusterissuers.cert-manager.io:ca:primary',
        { kind: 'clustertrustbundle', name: 'clusterissuers.cert-manager.io:ca:primary' },
        'clustertrustbundle:clusterissuers.cert-manager.io:ca:primary',
      ],
      [
        'clustertrustbundle:plain-roots',
        { kind: 'clustertrustbundle', name: 'plain-roots' },
        'clustertrustbundle:plain-roots',
      ],
      [
        'clustertrustbundle-signer:clusterissuers.cert-manager.io/ca',
        {
          kind: 'clustertrustbundle-signer',
          signerName: 'clusterissuers.cert-manager.io/ca',
          labelSelector: '',
        },
        'clustertrustbundle-signer:clusterissuers.cert-manager.io/ca',
      ],
      [
        'clustertrustbundle-signer:example.com/mesh; stage in (live,canary),!old',
        {
          kind: 'clustertrustbundle-signer',
          signerName: 'example.com/mesh',
          labelSelector: 'stage in (live,canary),!old',
        },
        'clustertrustbundle-signer:example.com/mesh;stage in (live,canary),!old',
      ],
      [
        'bundle:corp-roots',
        { kind: 'bundle', namespace: 'shop', name: 'corp-roots' },
        'bundle:shop/corp-roots',
      ],
      [
        'bundle:corp-roots/root-certs.pem',
        { kind: 'bundle', namespace: 'shop', name: 'corp-roots', key: 'root-certs.pem' },
        'bundle:shop/corp-roots/root-certs.pem',
      ],
    ];
    for (const [text, source, described] of cases) {
      const parsed = parseTrustBundleSource(text, 'shop');
      t.same(parsed, { ok: true, source }, text);
      if (parsed.ok) t.equal(describeTrustBundleSource(parsed.source), described);
    }
  },
);

t.test('bad values are refused with a reason, values shortened', async (t) => {
  const long = `configmap:${'a'.repeat(300)}/k`;
  const cases: Array<[string, RegExp]> = [
    [
      'roots',
      /Invalid value: "roots": must be one of configmap:<name>\/<key>, clustertrustbundle:/,
    ],
    ['secret:x/y', /must be one of/],
    ['configmap:roots', /must be configmap:<name>\/<key>/],
    ['configmap:/ca.crt', /Required value: configmap name is empty/],
    ['configmap:Roots/ca.crt', /Invalid value: "Roots": a lowercase RFC 1123 subdomain/],
    ['configmap:roots/', /Required value: the key is empty/],
    ['configmap:roots/a b', /Invalid value: "a b": a valid config key must consist of/],
    ['configmap:roots/..x', /must not be '\.' or '\.\.' nor start with '\.\.'/],
    [`configmap:roots/${'k'.repeat(254)}`, /Too long: .*may not be more than 253 characters/],
    ['bundle:x/', /Required value: the key is empty/],
    ['clustertrustbundle:', /Required value: clustertrustbundle name is empty/],
    [
      'clustertrustbundle:a:b',
      /Invalid value: "a:b": a ClusterTrustBundle name is a DNS subdomain/,
    ],
    [
      'clustertrustbundle:nodot:x:primary',
      /signerName: Invalid value: "nodot": should be a domain/,
    ],
    ['clustertrustbundle:example.com:x:Bad', /Invalid value: "Bad"/],
    ['clustertrustbundle-signer:', /signerName: Required value/],
    ['clustertrustbundle-signer:no-slash', /must be a fully qualified domain and path/],
    [
      'clustertrustbundle-signer:example.com/x;a in (',
      /Invalid value: "a in \(": not a label selector/,
    ],
    [long, /^Too long: "a{100}"…\(300 characters\): may not be more than 253 characters/],
    ['x'.repeat(300), /^Invalid value: "x{100}"…\(300 characters\): must be one of/],
  ];
  for (const [text, expected] of cases) {
    const parsed = parseTrustBundleSource(text, 'shop');
    t.equal(parsed.ok, false, text);
    if (!parsed.ok) t.match(parsed.problems.join('; '), expected, text);
  }
});

t.test(
  'the attribute reaches the spec, and a bad one is an InvalidArgument naming the key',
  async (t) => {
    const ok = parseVolumeAttributes({
      ...POD_CONTEXT,
      'csi.cert-manager.io/trust-bundle': 'configmap:roots/ca.crt',
    });
    t.ok(ok.ok);
    if (ok.ok) {
      t.same(ok.spec.trustBundle, {
        kind: 'configmap',
        namespace: 'shop',
        name: 'roots',
        key: 'ca.crt',
      });
    }
    const none = parseVolumeAttributes(POD_CONTEXT);
    t.ok(
      none.ok && none.spec.trustBundle === undefined,
      'absent: the request status.ca is written',
    );
    for (const [value, expected] of [
      ['', /csi\.cert-manager\.io\/trust-bundle: Required value: one of configmap:/],
      ['configmap:roots', /csi\.cert-manager\.io\/trust-bundle: Invalid value: "configmap:roots"/],
    ] as const) {
      const bad = parseVolumeAttributes({
        ...POD_CONTEXT,
        'csi.cert-manager.io/trust-bundle': value,
      });
      t.equal(bad.ok, false);
      if (!bad.ok) t.match(formatAttributeErrors(bad.errors), expected);
    }
  },
);
