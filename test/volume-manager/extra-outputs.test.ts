import { createPrivateKey } from 'node:crypto';
import t from 'tap';
import { type CertificateRequest, encodeBytes } from '../../src/api/certificate-request.js';
import type { VolumeCertificateSpec } from '../../src/api/volume-spec.js';
import { parseVolumeAttributes } from '../../src/attributes/volume-attributes.js';
import { certificateFiles } from '../../src/volume-manager/issuance/certificate-files.js';
import { jksFilesForCa } from '../../src/volume-manager/issuance/extra-outputs.js';
import { makeCA } from '../support/issuer-fixtures.js';

// Attributes of a volume asking for every extra output; a self-signed CA plays the leaf, so
// its key matches the "issued" certificate.
function specWith(extra: Record<string, string>): VolumeCertificateSpec {
  const parsed = parseVolumeAttributes({
    'csi.storage.k8s.io/ephemeral': 'true',
    'csi.storage.k8s.io/pod.name': 'app-0',
    'csi.storage.k8s.io/pod.namespace': 'sandbox',
    'csi.cert-manager.io/issuer-name': 'ca',
    'csi.cert-manager.io/key-algorithm': 'ECDSA',
    ...extra,
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  return parsed.spec;
}

function issued(certificatePem: string, caPem: string): CertificateRequest {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'CertificateRequest',
    metadata: { name: 'req-1', namespace: 'sandbox' },
    spec: { request: '', issuerRef: { name: 'ca' } },
    status: { certificate: encodeBytes(certificatePem), ca: encodeBytes(caPem) },
  } as CertificateRequest;
}

t.test('the extra outputs are files of the issuance, or it fails as invalid', async (t) => {
  const ca = await makeCA();
  const key = createPrivateKey(ca.keyPem);
  const spec = specWith({
    'csi.cert-manager.io/combined-pem-file': 'both.pem',
    'csi.cert-manager.io/jks-enable': 'true',
    'csi.cert-manager.io/jks-password': 'pw-secret',
  });
  const ok = await certificateFiles(issued(ca.certificatePem, ''), key, spec, new Date());
  t.same(
    [...ok.files.keys()].sort(),
    ['both.pem', 'ca.crt', 'keystore.jks', 'tls.crt', 'tls.key', 'truststore.jks'],
    'a truststore even without a CA, as ca.crt is written even when empty',
  );
  t.equal(
    Buffer.from(ok.files.get('both.pem') ?? []).toString(),
    Buffer.from(ok.files.get('tls.key') ?? []).toString() + ca.certificatePem,
  );

  const notACertificate =
    '-----BEGIN NOT A CERTIFICATE-----\nAAAA\n-----END NOT A CERTIFICATE-----\n';
  await t.rejects(
    certificateFiles(issued(ca.certificatePem, notACertificate), key, spec, new Date()),
    {
      name: 'IssuanceError',
      reason: 'invalid-certificate',
      message:
        /^request "req-1" returned a certificate or CA that cannot go into the volume's keystore: PEM block 1 is "NOT A CERTIFICATE", not a certificate$/,
    },
  );
  const withoutJks = specWith({ 'csi.cert-manager.io/combined-pem-file': 'both.pem' });
  const plain = await certificateFiles(
    issued(ca.certificatePem, notACertificate),
    key,
    withoutJks,
    new Date(),
  );
  t.ok(plain.files.has('both.pem'), 'without JKS the CA is not parsed, as before');
});

t.test('JKS stores for a new CA name the volume file they cannot read', async (t) => {
  const ca = await makeCA();
  const spec = specWith({
    'csi.cert-manager.io/jks-enable': 'true',
    'csi.cert-manager.io/jks-password': 'pw-secret',
  });
  const jks = spec.files.jks as NonNullable<VolumeCertificateSpec['files']['jks']>;
  const build = (files: Record<string, string>) => () =>
    jksFilesForCa({
      files: new Map(Object.entries(files).map(([name, pem]) => [name, Buffer.from(pem)])),
      names: spec.files,
      jks,
      caPem: ca.certificatePem,
      now: new Date(),
    });
  t.throws(build({ 'tls.crt': ca.certificatePem }), { message: 'no key file tls.key' });
  t.throws(build({ 'tls.key': ca.keyPem }), { message: 'no certificate file tls.crt' });
  t.throws(build({ 'tls.key': 'pw-secret', 'tls.crt': ca.certificatePem }), {
    message: 'key file tls.key: cannot decode private key: no private key PEM block found',
  });
  const stores = build({ 'tls.key': ca.keyPem, 'tls.crt': ca.certificatePem })();
  t.same([...stores.keys()], ['keystore.jks', 'truststore.jks']);
});
