import t from 'tap';
import type { CertificateSpec } from '../../src/api/certificate.js';
import { validateCertificateSpec } from '../../src/certificates/certificate-validation.js';
import { importedUrl, moduleFileUrl } from '../support/project-files.js';

const valid: CertificateSpec = {
  secretName: 'web-tls',
  issuerRef: { name: 'ca', kind: 'Issuer' },
  dnsNames: ['web.example.com'],
};

t.test('a minimal Certificate is valid', async (t) => {
  t.same(validateCertificateSpec(valid), []);
  t.same(
    validateCertificateSpec({
      ...valid,
      duration: '1h',
      renewBefore: '5m',
      usages: ['server auth'],
    }),
    [],
    'exactly the minimums',
  );
});

t.test('each rule with cert-manager’s message (ValidateCertificateSpec)', async (t) => {
  const cases: Array<[string, CertificateSpec, string[]]> = [
    [
      'no secretName',
      { ...valid, secretName: '' },
      ['spec.secretName: Required value: must be specified'],
    ],
    [
      'a secretName that is no DNS subdomain',
      { ...valid, secretName: 'Web_TLS' },
      [
        `spec.secretName: Invalid value: "Web_TLS": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', must start and end with an alphanumeric character, and be at most 253 characters`,
      ],
    ],
    [
      'no issuer name',
      { ...valid, issuerRef: { name: '' } },
      ['spec.issuerRef.name: Required value: must be specified'],
    ],
    [
      'an external kind without its group',
      { ...valid, issuerRef: { name: 'x', kind: 'AWSPCAClusterIssuer' } },
      [
        'spec.issuerRef.kind: Invalid value: "AWSPCAClusterIssuer": must be one of Issuer or ClusterIssuer (did you forget to set spec.issuerRef.kind.group?)',
      ],
    ],
    [
      'no name at all',
      { secretName: 's', issuerRef: { name: 'ca' } },
      [
        'spec: Invalid value: "": at least one of commonName (from the commonName field or from a literalSubject), dnsNames, emailSANs, ipAddresses, otherNames, or uriSANs must be set',
      ],
    ],
    [
      'a 65-byte common name',
      { ...valid, commonName: 'a'.repeat(65) },
      ['spec.commonName: Too long: may not be more than 64 bytes'],
    ],
    [
      'a bad IP',
      { ...valid, ipAddresses: ['10.0.0.1', '10.0.0'] },
      ['spec.ipAddresses[1]: Invalid value: "10.0.0": invalid IP address'],
    ],
    [
      'an email with a display name',
      { ...valid, emailAddresses: ['Ops <ops@example.com>'] },
      [
        'spec.emailAddresses[0]: Invalid value: "Ops <ops@example.com>": invalid email address: make sure the supplied value only contains the email address itself',
      ],
    ],
    [
      'an RSA size out of range',
      { ...valid, privateKey: { algorithm: 'RSA', size: 1024 } },
      [
        'spec.privateKey.size: Invalid value: 1024: must be between 2048 and 8192 for rsa keyAlgorithm',
      ],
    ],
    [
      'an ECDSA size',
      { ...valid, privateKey: { algorithm: 'ECDSA', size: 512 } },
      ['spec.privateKey.size: Unsupported value: 512: supported values: "256", "384", "521"'],
    ],
    [
      'a duration under 1h',
      { ...valid, duration: '30m' },
      ['spec.duration: Invalid value: 30m0s: certificate duration must be greater than 1h0m0s'],
    ],
    [
      'renewBefore under 5m',
      { ...valid, renewBefore: '4m' },
      ['spec.renewBefore: Invalid value: 4m0s: certificate renewBefore must be greater than 5m0s'],
    ],
    [
      'renewBefore not under the duration',
      { ...valid, duration: '2h', renewBefore: '2h' },
      [
        'spec.renewBefore: Invalid value: 2h0m0s: certificate duration 2h0m0s must be greater than renewBefore 2h0m0s',
      ],
    ],
    [
      'renewBefore and a percentage',
      { ...valid, renewBefore: '1h', renewBeforePercentage: 10 },
      [
        'spec.renewBefore: Invalid value: 1h0m0s: renewBefore and renewBeforePercentage are mutually exclusive and cannot both be set',
        'spec.renewBeforePercentage: Invalid value: 10: renewBefore and renewBeforePercentage are mutually exclusive and cannot both be set',
      ],
    ],
    [
      'a percentage leaving under 5m (cert-manager computes duration × (100 − p))',
      { ...valid, duration: '1h', renewBeforePercentage: 95 },
      [
        'spec.renewBeforePercentage: Invalid value: 95: certificate renewBeforePercentage must result in a renewBefore greater than 5m0s',
      ],
    ],
    ['only a percentage: not range-checked', { ...valid, renewBeforePercentage: 99 }, []],
    [
      'an unknown usage',
      { ...valid, usages: ['server auth', 'teleport'] },
      ['spec.usages[1]: Invalid value: "teleport": unknown keyusage'],
    ],
    [
      'revisionHistoryLimit 0',
      { ...valid, revisionHistoryLimit: 0 },
      ['spec.revisionHistoryLimit: Invalid value: 0: must not be less than 1'],
    ],
    [
      'a cert-manager.io annotation in the template',
      {
        ...valid,
        secretTemplate: {
          annotations: {
            'cert-manager.io/issuer-name': 'x',
            'cert-manager.io/allow-direct-injection': 'true',
          },
        },
      },
      [
        'spec.secretTemplate.annotations: Invalid value: "cert-manager.io/issuer-name": cert-manager.io/* annotations are not allowed',
      ],
    ],
    [
      'a duplicate output format',
      { ...valid, additionalOutputFormats: [{ type: 'DER' }, { type: 'DER' }] },
      ['spec.additionalOutputFormats[type]: Duplicate value: "DER"'],
    ],
    [
      'a keystore without a password',
      { ...valid, keystores: { pkcs12: { create: true } } },
      [
        'spec.keystores.pkcs12: Forbidden: must set exactly one of passwordSecretRef and password must for PKCS#12 keystores',
      ],
    ],
    [
      'a keystore with both passwords, one empty',
      {
        ...valid,
        keystores: { jks: { create: true, password: '', passwordSecretRef: { name: 'p' } } },
      },
      [
        'spec.keystores.jks: Forbidden: exactly one of passwordSecretRef and password must be provided for JKS keystores; cannot set both',
        'spec.keystores.jks.password: Forbidden: literal password cannot be empty if set on JKS keystores',
      ],
    ],
    [
      'a literal subject with a common name',
      { ...valid, literalSubject: 'CN=web,O=Example', commonName: 'web' },
      [
        'spec.commonName: Invalid value: "web": When providing a `LiteralSubject` no `commonName` may be provided.',
      ],
    ],
    [
      'a signature algorithm of another key type',
      { ...valid, privateKey: { algorithm: 'ECDSA' }, signatureAlgorithm: 'SHA256WithRSA' },
      [
        'spec.signatureAlgorithm: Invalid value: "SHA256WithRSA": for key algorithm ECDSA the allowed signature algorithms are [ECDSAWithSHA256 ECDSAWithSHA384 ECDSAWithSHA512]',
      ],
    ],
    [
      'an RSA signature algorithm for the default (RSA) key',
      { ...valid, signatureAlgorithm: 'PureEd25519' },
      [
        'spec.signatureAlgorithm: Invalid value: "PureEd25519": for key algorithm RSA the allowed signature algorithms are [SHA256WithRSA SHA384WithRSA SHA512WithRSA]',
      ],
    ],
    [
      'an Ed25519 key takes only PureEd25519',
      { ...valid, privateKey: { algorithm: 'Ed25519' }, signatureAlgorithm: 'ECDSAWithSHA256' },
      [
        'spec.signatureAlgorithm: Invalid value: "ECDSAWithSHA256": for key algorithm Ed25519 the allowed signature algorithms are [PureEd25519]',
      ],
    ],
    [
      'renewal windows: crons, descriptors and zones cert-manager reads',
      {
        ...valid,
        renewal: {
          policy: 'RenewBefore',
          windows: [
            { cron: '0 2 * * *', windowDuration: '1h' },
            {
              cron: '*/15 9-17 * jan-mar mon-fri',
              timezone: 'Europe/Paris',
              windowDuration: '1.5h30m',
            },
            { cron: '@weekly', timezone: 'America/Denver', windowDuration: '90m' },
            { cron: '@every 6h', windowDuration: '10s' },
          ],
        },
      },
      [],
    ],
    [
      'a renewal window with a bad cron',
      {
        ...valid,
        renewal: { policy: 'RenewBefore', windows: [{ cron: '0 2 * *', windowDuration: '1h' }] },
      },
      [
        'spec.renewal.windows[0].cron: Invalid value: "0 2 * *": invalid cron syntax: failed to parse cron spec \'0 2 * *\': expected exactly 5 fields, found 4: [0 2 * *]. cron needs to follow: cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow',
      ],
    ],
    [
      'a renewal window in a seconds dialect cert-manager does not read',
      {
        ...valid,
        renewal: {
          policy: 'RenewBefore',
          windows: [{ cron: '0 0 2 * * 7', windowDuration: '1h' }],
        },
      },
      [
        'spec.renewal.windows[0].cron: Invalid value: "0 0 2 * * 7": invalid cron syntax: failed to parse cron spec \'0 0 2 * * 7\': expected exactly 5 fields, found 6: [0 0 2 * * 7]. cron needs to follow: cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow',
      ],
    ],
    [
      'a renewal window with a bad time zone (the cron cannot be read in it either)',
      {
        ...valid,
        renewal: {
          policy: 'RenewBefore',
          windows: [{ cron: '0 2 * * *', timezone: 'Mars/Olympus', windowDuration: '1h' }],
        },
      },
      [
        'spec.renewal.windows[0].timezone: Invalid value: "Mars/Olympus": invalid value for timezone. timezone must be IANA compliant',
        'spec.renewal.windows[0].cron: Invalid value: "0 2 * * *": invalid cron syntax: failed to parse cron spec \'0 2 * * *\': provided bad location Mars/Olympus: unknown time zone Mars/Olympus. cron needs to follow: cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow',
      ],
    ],
    [
      'renewal windows with a bad windowDuration: missing, not the CRD pattern, zero',
      fromYaml({
        ...valid,
        renewal: {
          policy: 'RenewBefore',
          windows: [
            { cron: '0 2 * * *' },
            { cron: '0 3 * * *', windowDuration: '1d' },
            { cron: '0 4 * * *', windowDuration: '-1h' },
            { cron: '0 5 * * *', windowDuration: '0s' },
          ],
        },
      }),
      [
        'spec.renewal.windows[0].windowDuration: Required value: windowDuration must be specified and should be greater than 0',
        'spec.renewal.windows[1].windowDuration: Invalid value: "1d": spec.renewal.windows[1].windowDuration in body should match \'^([0-9]+(\\.[0-9]+)?(s|m|h))+$\'',
        'spec.renewal.windows[2].windowDuration: Invalid value: "-1h": spec.renewal.windows[2].windowDuration in body should match \'^([0-9]+(\\.[0-9]+)?(s|m|h))+$\'',
        'spec.renewal.windows[3].windowDuration: Invalid value: "0s": windowDuration must be specified and should be greater than 0',
      ],
    ],
    [
      'a renewal window without a cron, or with empty strings',
      fromYaml({
        ...valid,
        renewal: {
          policy: 'RenewBefore',
          windows: [{ windowDuration: '1h' }, { cron: '', timezone: '', windowDuration: '1h' }],
        },
      }),
      [
        'spec.renewal.windows[0].cron: Required value',
        'spec.renewal.windows[1].cron: Invalid value: "": spec.renewal.windows[1].cron in body should be at least 1 chars long',
        'spec.renewal.windows[1].timezone: Invalid value: "": spec.renewal.windows[1].timezone in body should be at least 1 chars long',
      ],
    ],
    [
      'a long bad cron is echoed shortened',
      {
        ...valid,
        renewal: {
          policy: 'RenewBefore',
          windows: [{ cron: `${'1,'.repeat(2000)} x`, windowDuration: '1h' }],
        },
      },
      [
        `spec.renewal.windows[0].cron: Invalid value: "${'1,'.repeat(50)}"…(4002 characters): invalid cron syntax: failed to parse cron spec '${'1,'.repeat(50)}…(4002 characters)': expected exactly 5 fields, found 2: [${'1,'.repeat(49)}1…(4004 characters). cron needs to follow: cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow`,
      ],
    ],
    [
      'otherNames alone are a name',
      {
        secretName: 's',
        issuerRef: { name: 'ca' },
        otherNames: [{ oid: '1.3.6.1.4.1.311.20.2.3', utf8Value: 'upn@example.com' }],
      },
      [],
    ],
    [
      'an otherName without oid or value',
      { ...valid, otherNames: [{}] },
      [
        'spec.otherNames[0].oid: Required value: must be specified',
        'spec.otherNames[0].oid: Invalid value: "": invalid oid syntax',
        'spec.otherNames[0].utf8Value: Required value: must be set to a valid non-empty UTF8 string',
      ],
    ],
    [
      'name constraints on a CA with every kind of entry',
      {
        ...valid,
        isCA: true,
        nameConstraints: {
          critical: true,
          permitted: {
            dnsDomains: ['.example.com'],
            ipRanges: ['10.0.0.0/8', 'fd00::/8'],
            emailAddresses: ['example.com'],
            uriDomains: ['.example.com'],
          },
          excluded: { dnsDomains: ['bad.example.com'] },
        },
      },
      [],
    ],
  ];
  for (const [name, spec, expected] of cases) t.same(validateCertificateSpec(spec), expected, name);
});

/** A spec as it may arrive from YAML: values the TypeScript type would not allow. */
function fromYaml(spec: object): CertificateSpec {
  return spec as CertificateSpec;
}

t.test('values from outside the type: bad durations, emails, enums', async (t) => {
  const cases: Array<[string, CertificateSpec, string[]]> = [
    [
      'an email without @',
      { ...valid, emailAddresses: ['ops'] },
      [
        'spec.emailAddresses[0]: Invalid value: "ops": invalid email address: mail: missing @ in addr-spec',
      ],
    ],
    [
      'an email with two @',
      { ...valid, emailAddresses: ['a@b@c'] },
      [
        'spec.emailAddresses[0]: Invalid value: "a@b@c": invalid email address: mail: invalid address',
      ],
    ],
    [
      'a duration that is no Go duration',
      { ...valid, duration: 'soon' },
      ['spec.duration: Invalid value: "soon": must be a Go duration, e.g. 2160h'],
    ],
    [
      'a renewBefore that is no Go duration',
      { ...valid, renewBefore: '1 day' },
      ['spec.renewBefore: Invalid value: "1 day": must be a Go duration, e.g. 360h'],
    ],
    [
      'a percentage of 0 leaves the whole duration',
      { ...valid, duration: '2h', renewBeforePercentage: 0 },
      [
        'spec.renewBeforePercentage: Invalid value: 0: certificate renewBeforePercentage must result in a renewBefore less than duration',
      ],
    ],
    [
      'a literal subject with subject fields',
      { ...valid, literalSubject: 'CN=web', subject: { organizations: ['Example'] } },
      [
        'spec.subject: Invalid value: {"organizations":["Example"]}: When providing a `LiteralSubject` no `Subject` properties may be provided.',
      ],
    ],
    [
      'an empty subject next to a literal subject is fine',
      { ...valid, literalSubject: 'CN=web', subject: { organizations: [] } },
      [],
    ],
    [
      'an unknown key algorithm, rotation policy and encoding',
      fromYaml({
        ...valid,
        privateKey: { algorithm: 'DSA', rotationPolicy: 'Sometimes', encoding: 'PEM' },
      }),
      [
        'spec.privateKey.algorithm: Invalid value: "DSA": must be either empty or one of rsa, ecdsa or ed25519',
        'spec.privateKey.rotationPolicy: Unsupported value: "Sometimes": supported values: "Never", "Always"',
        'spec.privateKey.encoding: Unsupported value: "PEM": supported values: "PKCS1", "PKCS8"',
      ],
    ],
    [
      'Ed25519 and RSA keys within range',
      {
        ...valid,
        privateKey: { algorithm: 'Ed25519', rotationPolicy: 'Never', encoding: 'PKCS8' },
      },
      [],
    ],
    [
      'name constraints without isCA or any constraint',
      { ...valid, nameConstraints: { critical: true } },
      [
        'spec.nameConstraints: Invalid value: {"critical":true}: isCa should be true when nameConstraints is set',
        'spec.nameConstraints: Invalid value: {"critical":true}: either permitted or excluded must be set',
      ],
    ],
    [
      'an unknown output format',
      fromYaml({ ...valid, additionalOutputFormats: [{ type: 'PFX' }] }),
      [
        'spec.additionalOutputFormats.type: Unsupported value: "PFX": supported values: "DER", "CombinedPEM"',
      ],
    ],
    [
      'renewal disabled with windows',
      {
        ...valid,
        renewal: { policy: 'Disabled', windows: [{ cron: '0 2 * * *', windowDuration: '1h' }] },
      },
      [
        'spec.renewal.windows: Forbidden: windows cannot be set when `renewal.policy` is set to Disabled',
      ],
    ],
    [
      'an unknown renewal policy',
      fromYaml({ ...valid, renewal: { policy: 'Weekly' } }),
      [
        'spec.renewal.policy: Unsupported value: "Weekly": supported values: "Disabled", "RenewBefore"',
      ],
    ],
    [
      'no renewal policy, and its windows are checked all the same',
      fromYaml({ ...valid, renewal: { windows: [{ cron: '0 2 * * *', windowDuration: '1h' }] } }),
      ['spec.renewal.policy: Unsupported value: "": supported values: "Disabled", "RenewBefore"'],
    ],
    ['renewal disabled alone', { ...valid, renewal: { policy: 'Disabled' } }, []],
    [
      'keystores with one password each',
      {
        ...valid,
        keystores: {
          jks: { create: true, password: 'changeit' },
          pkcs12: { create: true, passwordSecretRef: { name: 'p12', key: 'password' } },
        },
      },
      [],
    ],
  ];
  for (const [name, spec, expected] of cases) t.same(validateCertificateSpec(spec), expected, name);
});

t.test('otherNames: an OID in canonical dotted form and a non-empty UTF-8 value', async (t) => {
  const oidError = (oid: string) =>
    `spec.otherNames[0].oid: Invalid value: "${oid}": invalid oid syntax`;
  const cases: Array<[string, string, string[]]> = [
    ['1.3.6.1.4.1.311.20.2.3', 'upn@example.com', []],
    ['2.999.1', 'ünïcödé ✓', []],
    [`1.2.${2n ** 63n - 1n}`, 'the largest arc cert-manager reads', []],
    [`1.2.${2n ** 63n}`, 'one more', [oidError(`1.2.${2n ** 63n}`)]],
    ['not-an-oid', 'v', [oidError('not-an-oid')]],
    // cert-manager reads these with Go's Atoi, then fails building the CSR or never matches.
    ['1', 'one arc', [oidError('1')]],
    ['1.2.+3', 'a sign', [oidError('1.2.+3')]],
    ['1.2.03', 'a leading zero', [oidError('1.2.03')]],
    ['3.1', 'first arc above 2', [oidError('3.1')]],
    ['1.40', 'second arc of 40 under 1', [oidError('1.40')]],
    ['1.2..3', 'an empty arc', [oidError('1.2..3')]],
    [
      '1.2.3',
      '',
      [
        'spec.otherNames[0].utf8Value: Required value: must be set to a valid non-empty UTF8 string',
      ],
    ],
    [
      '1.2.3',
      'lone \ud800 surrogate',
      [
        'spec.otherNames[0].utf8Value: Required value: must be set to a valid non-empty UTF8 string',
      ],
    ],
  ];
  for (const [oid, utf8Value, expected] of cases)
    t.same(
      validateCertificateSpec({ ...valid, otherNames: [{ oid, utf8Value }] }),
      expected,
      `${oid} = ${JSON.stringify(utf8Value)}`,
    );
});

t.test('nameConstraints: CIDR ranges and names an IA5String can hold', async (t) => {
  const ca = (nameConstraints: CertificateSpec['nameConstraints']): CertificateSpec => ({
    ...valid,
    isCA: true,
    ...(nameConstraints ? { nameConstraints } : {}),
  });
  const cases: Array<[string, CertificateSpec, string[]]> = [
    ['an empty permitted list is set', ca({ permitted: {} }), []],
    [
      'ranges that are no CIDR',
      ca({
        permitted: { ipRanges: ['10.0.0.0/8', '10.0.0.1', '10.0.0.0/33', 'fd00::/129'] },
        excluded: { ipRanges: ['fe80::%eth0/64', 'x/8', '10.0.0.0/+8'] },
      }),
      [
        'spec.nameConstraints.permitted.ipRanges[1]: Invalid value: "10.0.0.1": invalid CIDR address',
        'spec.nameConstraints.permitted.ipRanges[2]: Invalid value: "10.0.0.0/33": invalid CIDR address',
        'spec.nameConstraints.permitted.ipRanges[3]: Invalid value: "fd00::/129": invalid CIDR address',
        'spec.nameConstraints.excluded.ipRanges[0]: Invalid value: "fe80::%eth0/64": invalid CIDR address',
        'spec.nameConstraints.excluded.ipRanges[1]: Invalid value: "x/8": invalid CIDR address',
        'spec.nameConstraints.excluded.ipRanges[2]: Invalid value: "10.0.0.0/+8": invalid CIDR address',
      ],
    ],
    [
      'names that are not ASCII',
      ca({
        permitted: { dnsDomains: ['.bücher.example'], emailAddresses: ['ü@example.com'] },
        excluded: { uriDomains: ['.ü.example'] },
      }),
      [
        'spec.nameConstraints.permitted.dnsDomains[0]: Invalid value: ".bücher.example": cannot be encoded as an IA5String',
        'spec.nameConstraints.permitted.emailAddresses[0]: Invalid value: "ü@example.com": cannot be encoded as an IA5String',
        'spec.nameConstraints.excluded.uriDomains[0]: Invalid value: ".ü.example": cannot be encoded as an IA5String',
      ],
    ],
  ];
  for (const [name, spec, expected] of cases) t.same(validateCertificateSpec(spec), expected, name);
});

t.test('signatureAlgorithm: each name of the CRD enum, for its own key type only', async (t) => {
  const byKey: Array<['RSA' | 'ECDSA' | 'Ed25519', string[]]> = [
    ['RSA', ['SHA256WithRSA', 'SHA384WithRSA', 'SHA512WithRSA']],
    ['ECDSA', ['ECDSAWithSHA256', 'ECDSAWithSHA384', 'ECDSAWithSHA512']],
    ['Ed25519', ['PureEd25519']],
  ];
  for (const [algorithm, names] of byKey)
    for (const name of names)
      t.same(
        validateCertificateSpec(
          fromYaml({ ...valid, privateKey: { algorithm }, signatureAlgorithm: name }),
        ),
        [],
        `${name} with an ${algorithm} key`,
      );
  t.same(
    validateCertificateSpec(fromYaml({ ...valid, signatureAlgorithm: 'SHA256WithRSAPSS' })),
    [
      'spec.signatureAlgorithm: Unsupported value: "SHA256WithRSAPSS": supported values: "SHA256WithRSA", "SHA384WithRSA", "SHA512WithRSA", "ECDSAWithSHA256", "ECDSAWithSHA384", "ECDSAWithSHA512", "PureEd25519"',
    ],
    'a name outside the enum, as the API server words it',
  );
  t.same(
    validateCertificateSpec(
      fromYaml({ ...valid, privateKey: { algorithm: 'DSA' }, signatureAlgorithm: 'SHA256WithRSA' }),
    ),
    [
      'spec.privateKey.algorithm: Invalid value: "DSA": must be either empty or one of rsa, ecdsa or ed25519',
    ],
    'an unknown key algorithm is reported once, not against the signature algorithm',
  );
});

t.test('bad values are echoed shortened, never whole', async (t) => {
  const long = `Web${'x'.repeat(400)}`;
  t.same(validateCertificateSpec({ ...valid, secretName: long }), [
    `spec.secretName: Invalid value: "Web${'x'.repeat(97)}"…(403 characters): a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', must start and end with an alphanumeric character, and be at most 253 characters`,
  ]);
  const [subjectError] = validateCertificateSpec({
    ...valid,
    literalSubject: 'CN=web',
    subject: { organizations: ['o'.repeat(300)] },
  });
  t.match(
    subjectError,
    /^spec\.subject: Invalid value: \{"organizations":\["o+…\(322 characters\): When providing/,
  );
});

// The rule a volume's literal-subject meets at publish: refused here, not after issuance.
t.test('a literal subject no certificate reader can read is refused', async (t) => {
  for (const literalSubject of ['CN=#0101ff', '1.2.3=#0500', 'CN=web,O=#130140', 'CN=#0c02c328']) {
    const errors = validateCertificateSpec({ ...valid, literalSubject });
    t.equal(errors.length, 1, `${literalSubject}: one error`);
    t.match(
      errors[0],
      /^spec\.literalSubject: Invalid value: "[^"]+": literal subject: the hex value for "[^"]+" is /,
      literalSubject,
    );
  }
  t.same(validateCertificateSpec({ ...valid, literalSubject: 'CN=#0c03776562' }), []);
});

t.test(
  'each list reports its first 10 errors and counts the rest (cert-manager lists all)',
  async (t) => {
    const many = (n: number, item: (i: number) => string) =>
      Array.from({ length: n }, (_, i) => item(i));
    const more = (path: string, n: number) =>
      `${path}: and ${n} more errors (only the first 10 are listed)`;
    const cases: Array<[string, Partial<CertificateSpec>, string, (i: number) => string]> = [
      [
        'ipAddresses',
        { ipAddresses: many(25, (i) => `ip-${i}`) },
        'spec.ipAddresses',
        (i) => `spec.ipAddresses[${i}]: Invalid value: "ip-${i}": invalid IP address`,
      ],
      [
        'emailAddresses',
        { emailAddresses: many(25, (i) => `mail-${i}`) },
        'spec.emailAddresses',
        (i) =>
          `spec.emailAddresses[${i}]: Invalid value: "mail-${i}": invalid email address: mail: missing @ in addr-spec`,
      ],
      [
        'usages',
        { usages: many(25, (i) => `use-${i}`) },
        'spec.usages',
        (i) => `spec.usages[${i}]: Invalid value: "use-${i}": unknown keyusage`,
      ],
      [
        'secretTemplate.annotations',
        {
          secretTemplate: {
            annotations: Object.fromEntries(
              many(25, (i) => `cert-manager.io/a${i}`).map((k) => [k, '']),
            ),
          },
        },
        'spec.secretTemplate.annotations',
        (i) =>
          `spec.secretTemplate.annotations: Invalid value: "cert-manager.io/a${i}": cert-manager.io/* annotations are not allowed`,
      ],
    ];
    for (const [what, fields, path, error] of cases) {
      t.same(
        validateCertificateSpec({ ...valid, ...fields }),
        [...many(10, error), more(path, 15)],
        what,
      );
    }
    // Two errors per item here (a duplicate and an unsupported type): the list counts errors.
    const formats = validateCertificateSpec({
      ...valid,
      additionalOutputFormats: many(12, () => 'PKCS7').map((type) => ({
        type,
      })) as NonNullable<CertificateSpec['additionalOutputFormats']>,
    });
    t.equal(formats.length, 11);
    t.equal(formats.at(-1), more('spec.additionalOutputFormats', 13));
    t.match(formats[0], /^spec\.additionalOutputFormats\.type: Unsupported value: "PKCS7"/);
    t.match(formats[1], /^spec\.additionalOutputFormats\[type\]: Duplicate value: "PKCS7"/);
  },
);

t.test('280k invalid emailAddresses (issue 23): 11 errors, not 280k', async (t) => {
  const emailAddresses = Array.from({ length: 280_000 }, (_, i) => `x${i}`);
  const errors = validateCertificateSpec({ ...valid, emailAddresses });
  t.equal(errors.length, 11);
  t.equal(
    errors.at(-1),
    'spec.emailAddresses: and 279990 more errors (only the first 10 are listed)',
  );
  t.ok(errors.join(', ').length < 2_000, 'a refusal of a kilobyte, not 30 MB');
});

t.test(
  'a display name around an address is told from other bad addresses, in one pass',
  async (t) => {
    const displayName =
      'invalid email address: make sure the supplied value only contains the email address itself';
    const cases: Array<[string, string]> = [
      ['Ops <ops@example.com>', displayName],
      ['<<ops@example.com>', displayName],
      ['<a<b@c>', displayName],
      ['x> <a@b>', displayName],
      ['<@example.com>', 'invalid email address: mail: invalid address'],
      ['<ops@>', 'invalid email address: mail: invalid address'],
      ['<a>b@c>', 'invalid email address: mail: invalid address'],
      ['<ops@example.com', 'invalid email address: mail: invalid address'],
      ['<opsexample.com>', 'invalid email address: mail: missing @ in addr-spec'],
      // A regular expression that backtracks takes minutes over this one; the scan does not.
      [`<${'a@'.repeat(100_000)}`, 'invalid email address: mail: invalid address'],
    ];
    for (const [email, problem] of cases) {
      const [error] = validateCertificateSpec({ ...valid, emailAddresses: [email] });
      t.ok(error?.endsWith(`: ${problem}`), `${email.slice(0, 30)}: ${error?.slice(0, 200)}`);
    }
  },
);

t.test(
  'a literal subject over 8 KiB is refused unparsed (ours: parsing costs per character)',
  async (t) => {
    const long = `CN=${'a+'.repeat(5_000)}`;
    t.same(validateCertificateSpec({ ...valid, dnsNames: [], literalSubject: long }), [
      'spec.literalSubject: Too long: may not be more than 8192 bytes',
    ]);
    t.same(
      validateCertificateSpec({ ...valid, literalSubject: `CN=${'a'.repeat(8_189)}` }),
      ['spec.commonName: Too long: may not be more than 64 bytes'],
      'at the limit: parsed',
    );
    t.same(
      validateCertificateSpec({ ...valid, literalSubject: 'nonsense' }),
      [
        `spec.literalSubject: Invalid value: "nonsense": literal subject: missing '=' in "nonsense"`,
      ],
      'a parse error in the parser’s words',
    );
  },
);

t.test(
  'a literal subject parser that fails unexpectedly is reported without its words',
  async (t) => {
    const subject = await import('../../src/pki/subject.js');
    const { validateCertificateSpec: validateMocked } = await t.mockImport<
      typeof import('../../src/certificates/certificate-validation.js')
    >(moduleFileUrl('src/certificates/certificate-validation.ts'), {
      [importedUrl('src/pki/subject.ts')]: {
        ...subject,
        parseLiteralSubject: () => {
          throw new TypeError("Cannot read properties of undefined (reading 'oid')");
        },
      },
    });
    t.same(validateMocked({ ...valid, literalSubject: 'CN=web' }), [
      'spec.literalSubject: Invalid value: "CN=web": cannot be parsed',
    ]);
  },
);
