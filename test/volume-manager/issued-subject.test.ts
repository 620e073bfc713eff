import t from 'tap';
import type { CertificateRequest } from '../../src/api/certificate-request.js';
import { encodeBytes } from '../../src/api/certificate-request.js';
import { parseVolumeAttributes } from '../../src/attributes/volume-attributes.js';
import { certificateFiles } from '../../src/volume-manager/issuance/certificate-files.js';
import { certificateWithSubject, oneAttributeName } from '../support/raw-name-fixtures.js';

// The node applies to every certificate it receives the rule a literal subject meets at
// publish: a subject some reader refuses is refused here too, whoever issued it.

const parsed = parseVolumeAttributes({
  'csi.storage.k8s.io/ephemeral': 'true',
  'csi.storage.k8s.io/pod.name': 'app-0',
  'csi.storage.k8s.io/pod.namespace': 'sandbox',
  'csi.cert-manager.io/issuer-name': 'ca',
  'csi.cert-manager.io/key-algorithm': 'ECDSA',
});
if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
const spec = parsed.spec;

function issued(certificatePem: string): CertificateRequest {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'CertificateRequest',
    metadata: { name: 'req-1', namespace: 'sandbox' },
    spec: { request: '', issuerRef: { name: 'ca' } },
    status: { certificate: encodeBytes(certificatePem), ca: encodeBytes(certificatePem) },
  };
}

t.test('a certificate whose subject some reader refuses is an invalid certificate', async (t) => {
  const cases: Array<[string, string, RegExp]> = [
    // OpenSSL reads it; Go's x509 does not.
    ['PrintableString "@"', '130140', /: the value of CN is a PrintableString with "@"/],
    ['IA5String not ASCII', '1602c3a9', /: the value of CN is an IA5String with the non-ASCII/],
    ['a SEQUENCE', '3003020101', /: the value of CN is a SEQUENCE, not a string type/],
    // Neither reads it: Node's own parser says so first.
    ['BOOLEAN', '0101ff', /: .*wrong tag/],
  ];
  for (const [name, value, message] of cases) {
    const { pem, key } = await certificateWithSubject(oneAttributeName(value));
    await t.rejects(
      certificateFiles(issued(pem), key, spec, new Date()),
      {
        name: 'IssuanceError',
        reason: 'invalid-certificate',
        message: new RegExp(`^request "req-1" returned an unreadable certificate${message.source}`),
      },
      name,
    );
  }
  const { pem, key } = await certificateWithSubject(oneAttributeName('0c03616263'));
  const files = await certificateFiles(issued(pem), key, spec, new Date());
  t.ok(files.files.has('tls.crt'), 'a UTF8String subject is written');
});
