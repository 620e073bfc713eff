import t from 'tap';
import { isIssuerReady, issuerTypeOf } from '../../src/api/issuer.js';
import { defaultIssuerRef, isCertManagerGroup } from '../../src/api/issuer-ref.js';
import { hashIdentifier } from '../../src/api/labels.js';
import { apiVersionOf, objectKey, splitObjectKey } from '../../src/api/meta.js';
import { PodCertificateRequestKind } from '../../src/api/pod-certificate-request.js';
import { SecretKind, secretValue } from '../../src/api/secret.js';
import {
  issuer,
  issuerFrom,
  withConditions,
  withNamespace,
  withSpec,
} from '../support/builders/index.js';

t.test('hashIdentifier matches csi-lib (FNV-1, digit alphabet)', async (t) => {
  t.equal(hashIdentifier('test-node'), 'f56fd9f8b');
  t.match(hashIdentifier('csi-0123456789abcdef'), /^[bcdfghjklmnpqrstvwxz2456789]+$/);
  t.not(hashIdentifier('node-a'), hashIdentifier('node-b'));
});

t.test('issuerRef defaults are kind Issuer and group cert-manager.io', async (t) => {
  t.same(defaultIssuerRef({ name: 'x' }), { name: 'x', kind: 'Issuer', group: 'cert-manager.io' });
  t.same(defaultIssuerRef({ name: 'x', kind: 'ClusterIssuer', group: 'example.com' }), {
    name: 'x',
    kind: 'ClusterIssuer',
    group: 'example.com',
  });
  t.ok(isCertManagerGroup({ name: 'x' }));
  t.ok(isCertManagerGroup({ name: 'x', group: 'cert-manager.io' }));
  t.notOk(isCertManagerGroup({ name: 'x', group: 'awspca.cert-manager.io' }));
});

t.test('issuer type and readiness', async (t) => {
  const nsIssuer = issuer('i', withNamespace('ns'));
  t.equal(issuerTypeOf(issuerFrom(nsIssuer, withSpec({ ca: { secretName: 's' } }))), 'ca');
  t.equal(issuerTypeOf(issuerFrom(nsIssuer, withSpec({ selfSigned: {} }))), 'selfSigned');
  t.equal(issuerTypeOf(issuerFrom(nsIssuer, withSpec({ acme: {} }))), 'acme');
  t.equal(issuerTypeOf(issuerFrom(nsIssuer, withSpec({}))), undefined);
  t.ok(
    isIssuerReady(
      issuerFrom(
        nsIssuer,
        withSpec({ selfSigned: {} }),
        withConditions([{ type: 'Ready', status: 'True' }]),
      ),
    ),
  );
  t.notOk(
    isIssuerReady(
      issuerFrom(
        nsIssuer,
        withSpec({ selfSigned: {} }),
        withConditions([{ type: 'Ready', status: 'False' }]),
      ),
    ),
  );
  t.notOk(isIssuerReady(issuerFrom(nsIssuer, withSpec({ selfSigned: {} }))));
});

t.test('secret values decode base64 data and prefer stringData', async (t) => {
  const secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 's', namespace: 'ns' },
    data: { a: Buffer.from('from-data').toString('base64'), b: 'eA==' },
    stringData: { b: 'from-string-data' },
  };
  t.equal(secretValue(secret, 'a'), 'from-data');
  t.equal(secretValue(secret, 'b'), 'from-string-data');
  t.equal(secretValue(secret, 'missing'), undefined);
});

t.test('object keys and api versions', async (t) => {
  t.equal(apiVersionOf(SecretKind), 'v1');
  t.equal(
    apiVersionOf({
      group: 'cert-manager.io',
      version: 'v1',
      kind: 'X',
      plural: 'xs',
      namespaced: true,
    }),
    'cert-manager.io/v1',
  );
  t.equal(apiVersionOf(SecretKind, 'v2'), 'v2', 'the core group: the version alone');
  t.equal(
    apiVersionOf(PodCertificateRequestKind, 'v1beta1'),
    'certificates.k8s.io/v1beta1',
    'a version the kind is served in besides its own',
  );
  t.equal(apiVersionOf(PodCertificateRequestKind), 'certificates.k8s.io/v1');
  t.equal(objectKey('ns', 'a'), 'ns/a');
  t.equal(objectKey(undefined, 'a'), 'a');
  t.same(splitObjectKey('ns/a'), { namespace: 'ns', name: 'a' });
  t.same(splitObjectKey('a'), { name: 'a' });
});
