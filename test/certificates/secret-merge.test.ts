import t from 'tap';
import type { Secret } from '../../src/api/secret.js';
import type { IssuedSecretContent } from '../../src/certificates/issued-secret.js';
import { mergeIssuedSecret, secretNeedsContent } from '../../src/certificates/secret-merge.js';
import {
  secret,
  secretFrom,
  withAnnotations,
  withEncodedData,
  withLabels,
  withNamespace,
  withResourceVersion,
  withType,
} from '../support/builders/index.js';

const b64 = (text: string) => Buffer.from(text).toString('base64');
const bytes = (text: string) => Buffer.from(text);

const content: IssuedSecretContent = {
  labels: { 'controller.cert-manager.io/fao': 'true', team: 'a' },
  annotations: { 'cert-manager.io/certificate-name': 'web', 'cert-manager.io/common-name': '' },
  data: { 'tls.key': bytes('KEY'), 'tls.crt': bytes('CRT'), 'keystore.p12': bytes('P12') },
};

const webTls = secret(
  'web-tls',
  withNamespace('apps'),
  withResourceVersion('7'),
  withLabels({ 'controller.cert-manager.io/fao': 'true', team: 'a' }),
  withAnnotations({ 'cert-manager.io/certificate-name': 'web', 'cert-manager.io/common-name': '' }),
  withType('kubernetes.io/tls'),
  withEncodedData({
    'tls.key': b64('KEY'),
    'tls.crt': b64('CRT'),
    'keystore.p12': b64('other salt'),
  }),
);

t.test('mergeIssuedSecret: a new Secret is kubernetes.io/tls with the content', async (t) => {
  const merged = mergeIssuedSecret(undefined, { name: 'web-tls', namespace: 'apps' }, content);
  t.same(merged, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: 'web-tls',
      namespace: 'apps',
      labels: content.labels,
      annotations: content.annotations,
    },
    type: 'kubernetes.io/tls',
    data: { 'tls.key': b64('KEY'), 'tls.crt': b64('CRT'), 'keystore.p12': b64('P12') },
  });
});

t.test('mergeIssuedSecret: managed keys replaced or removed, the rest kept', async (t) => {
  const existing = secretFrom(
    webTls,
    withType('Opaque'),
    withEncodedData({
      'tls.key': b64('OLD'),
      'ca.crt': b64('OLD CA'),
      'key.der': b64('OLD DER'),
      'user-file': b64('mine'),
    }),
  );
  existing.metadata.labels = { mine: 'yes', team: 'z' };
  existing.metadata.annotations = {
    'example.com/note': 'kept',
    'cert-manager.io/subject-organizations': 'gone now',
  };
  const merged = mergeIssuedSecret(existing, { name: 'web-tls', namespace: 'apps' }, content);
  t.equal(merged.type, 'Opaque', 'an existing Secret keeps its type');
  t.equal(merged.metadata.resourceVersion, '7', 'written against the version read');
  t.same(merged.data, {
    'user-file': b64('mine'),
    'tls.key': b64('KEY'),
    'tls.crt': b64('CRT'),
    'keystore.p12': b64('P12'),
  });
  t.same(merged.metadata.labels, {
    mine: 'yes',
    team: 'a',
    'controller.cert-manager.io/fao': 'true',
  });
  t.same(merged.metadata.annotations, {
    'example.com/note': 'kept',
    'cert-manager.io/certificate-name': 'web',
    'cert-manager.io/common-name': '',
  });
});

t.test('secretNeedsContent: what a Secret must show before nothing is rewritten', async (t) => {
  const cases: Array<[string, Secret, boolean]> = [
    ['everything there (a keystore by presence only)', secretFrom(webTls), false],
    ['a label missing', secretFrom(webTls, withLabels({ team: 'a' })), true],
    [
      'an annotation different',
      secretFrom(webTls, withAnnotations({ 'cert-manager.io/certificate-name': 'other' })),
      true,
    ],
    [
      'a managed key missing',
      secretFrom(webTls, withEncodedData({ 'tls.key': b64('KEY'), 'keystore.p12': b64('x') })),
      true,
    ],
    [
      'a managed key different',
      secretFrom(
        webTls,
        withEncodedData({ 'tls.key': b64('KEY'), 'tls.crt': b64('NEW'), 'keystore.p12': b64('x') }),
      ),
      true,
    ],
    [
      'a managed key left over',
      secretFrom(
        webTls,
        withEncodedData({
          'tls.key': b64('KEY'),
          'tls.crt': b64('CRT'),
          'keystore.p12': b64('x'),
          'tls-combined.pem': b64('old'),
        }),
      ),
      true,
    ],
    [
      'a user key is none of its business',
      secretFrom(
        webTls,
        withEncodedData({
          'tls.key': b64('KEY'),
          'tls.crt': b64('CRT'),
          'keystore.p12': b64('x'),
          mine: 'x',
        }),
      ),
      false,
    ],
  ];
  for (const [label, existing, expected] of cases)
    t.equal(secretNeedsContent(existing, content), expected, label);
});
