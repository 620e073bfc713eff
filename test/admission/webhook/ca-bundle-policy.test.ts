import { X509Certificate } from 'node:crypto';
import t from 'tap';
import {
  caBundleOf,
  configurationTrusts,
  type WebhookConfigurationObject,
  withCaBundle,
} from '../../../src/admission/webhook/ca-bundle-policy.js';
import { makeCA } from '../../support/issuer-fixtures.js';

const [a, b] = await Promise.all([makeCA(), makeCA()]);
const caA = new X509Certificate(a.certificatePem);

/** A configuration without any webhook (the field absent). */
function empty(): WebhookConfigurationObject {
  const { webhooks: _w, ...rest } = configuration();
  return rest;
}

function configuration(...bundles: Array<string | undefined>): WebhookConfigurationObject {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'x', resourceVersion: '7' },
    webhooks: bundles.map((caBundle, i) => ({
      name: `w${i}.example.com`,
      clientConfig: { service: { namespace: 'n', name: 's' }, ...(caBundle ? { caBundle } : {}) },
    })),
  };
}

t.test('caBundle is the base64 of the PEM', async (t) => {
  t.equal(Buffer.from(caBundleOf(a.certificatePem), 'base64').toString(), a.certificatePem);
});

t.test('every webhook gets the bundle; nothing to write when all have it', async (t) => {
  const bundle = caBundleOf(a.certificatePem);
  const updated = withCaBundle(configuration(undefined, caBundleOf(b.certificatePem)), bundle);
  t.same(
    updated?.webhooks?.map((w) => w.clientConfig),
    [
      { service: { namespace: 'n', name: 's' }, caBundle: bundle },
      { service: { namespace: 'n', name: 's' }, caBundle: bundle },
    ],
  );
  t.equal(updated?.metadata.resourceVersion, '7', 'written at the resourceVersion read');
  t.equal(withCaBundle(configuration(bundle, bundle), bundle), undefined);
  t.equal(withCaBundle(empty(), bundle), undefined, 'no webhooks');
});

t.test('a configuration trusts a CA when every webhook’s bundle holds it', async (t) => {
  const both = caBundleOf(b.certificatePem + a.certificatePem);
  t.ok(configurationTrusts(configuration(both, caBundleOf(a.certificatePem)), caA));
  t.notOk(
    configurationTrusts(configuration(both, caBundleOf(b.certificatePem)), caA),
    'one lacks it',
  );
  t.notOk(configurationTrusts(configuration(both, undefined), caA), 'one has none');
  t.notOk(
    configurationTrusts(
      configuration(caBundleOf('-----BEGIN X-----\nAA==\n-----END X-----\n')),
      caA,
    ),
    'a bundle that is no certificate trusts nothing',
  );
  t.ok(configurationTrusts(empty(), caA), 'no webhook: nothing to trust it');
});
