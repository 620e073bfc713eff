import t from 'tap';
import { validateIssuerSpec } from '../../src/admission/issuer-rules.js';
import type { IssuerSpec } from '../../src/api/issuer.js';

const TYPE_REQUIRED = 'spec: Required value: at least one issuer must be configured';
const more = (type: string) => `spec.${type}: Forbidden: may not specify more than one issuer type`;

t.test('exactly one issuer type', async (t) => {
  const cases: Array<[string, IssuerSpec | undefined, string[]]> = [
    ['ca', { ca: { secretName: 'root' } }, []],
    ['selfSigned', { selfSigned: {} }, []],
    ['selfSigned with CRL points', { selfSigned: { crlDistributionPoints: ['http://crl'] } }, []],
    ['no spec', undefined, [TYPE_REQUIRED]],
    ['an empty spec', {}, [TYPE_REQUIRED]],
    ['a null type is no type', { ca: null } as unknown as IssuerSpec, [TYPE_REQUIRED]],
    ['a type cert-manager does not know', { example: {} }, [TYPE_REQUIRED]],
    ['ca and selfSigned', { ca: { secretName: 'root' }, selfSigned: {} }, [more('selfSigned')]],
    [
      'the first type counts, later ones are refused in cert-manager’s order',
      { venafi: {}, selfSigned: {}, acme: {}, ca: { secretName: '' } },
      [more('ca'), more('selfSigned'), more('venafi')],
    ],
  ];
  for (const [name, spec, errors] of cases) t.same(validateIssuerSpec(spec), errors, name);
});

t.test('issuer types cert-csi does not sign for are admitted without a look inside', async (t) => {
  for (const type of ['acme', 'vault', 'venafi'])
    t.same(validateIssuerSpec({ [type]: {} }), [], type);
});

t.test('ca: secretName required, no empty URL', async (t) => {
  t.same(validateIssuerSpec({ ca: {} as never }), ['spec.ca.secretName: Required value']);
  t.same(
    validateIssuerSpec({
      ca: {
        secretName: 'root',
        ocspServers: ['http://ocsp.example', ''],
        issuingCertificateURLs: ['', 'http://ca.example/ca.crt', ''],
        crlDistributionPoints: [''],
      },
    }),
    [
      'spec.ca.ocspServer[1]: Invalid value: "": must be a valid URL, e.g., http://ocsp.int-x3.letsencrypt.org',
      'spec.ca.issuingCertificateURLs[0]: Invalid value: "": must be a valid URL',
      'spec.ca.issuingCertificateURLs[2]: Invalid value: "": must be a valid URL',
    ],
    'cert-manager checks only emptiness, names the OCSP path ocspServer and leaves CRL points alone',
  );
});

t.test('a CA issuer with thousands of empty URLs: ten errors per list and a count', async (t) => {
  const errors = validateIssuerSpec({
    ca: {
      secretName: 'root',
      ocspServers: Array(5_000).fill(''),
      issuingCertificateURLs: Array(200_000).fill(''),
    },
  });
  t.equal(errors.length, 22);
  t.equal(
    errors[0],
    'spec.ca.ocspServer[0]: Invalid value: "": must be a valid URL, e.g., http://ocsp.int-x3.letsencrypt.org',
  );
  t.equal(errors[10], 'spec.ca.ocspServer: and 4990 more errors (only the first 10 are listed)');
  t.equal(errors[11], 'spec.ca.issuingCertificateURLs[0]: Invalid value: "": must be a valid URL');
  t.equal(
    errors[21],
    'spec.ca.issuingCertificateURLs: and 199990 more errors (only the first 10 are listed)',
  );
});
