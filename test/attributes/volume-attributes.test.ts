// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${NAME}` is the variable syntax under test
import t from 'tap';
import {
  ATTRIBUTE_PREFIX,
  type AttributeError,
  formatAttributeErrors,
  LEGACY_ATTRIBUTE_PREFIX,
  type ParsedVolumeAttributes,
  parseVolumeAttributes,
} from '../../src/attributes/volume-attributes.js';

const POD_CONTEXT: Readonly<Record<string, string>> = {
  'csi.storage.k8s.io/pod.name': 'my-pod-name',
  'csi.storage.k8s.io/pod.namespace': 'my-namespace',
  'csi.storage.k8s.io/pod.uid': 'my-pod-uuid',
  'csi.storage.k8s.io/serviceAccount.name': 'my-service-account',
  'csi.storage.k8s.io/ephemeral': 'true',
};

const key = (name: string): string => `${ATTRIBUTE_PREFIX}${name}`;

// Attributes by short name (or full key when it has a '/'); undefined removes a key.
type Attrs = Readonly<Record<string, string | undefined>>;

function context(
  attrs: Attrs,
  base: Attrs = { 'issuer-name': 'my-issuer' },
): Record<string, string> {
  const out: Record<string, string> = { ...POD_CONTEXT };
  for (const [name, value] of Object.entries({ ...base, ...attrs })) {
    const full = name.includes('/') ? name : key(name);
    if (value === undefined) delete out[full];
    else out[full] = value;
  }
  return out;
}

function parse(attrs: Attrs, options?: { volumeMountGroup?: string }): ParsedVolumeAttributes {
  return parseVolumeAttributes(context(attrs), options);
}

const lines = (errors: readonly AttributeError[]): string[] =>
  errors.map((e) => `${e.key}: ${e.message}`).sort();

function errorsOf(attrs: Attrs, options?: { volumeMountGroup?: string }): string[] {
  const result = parse(attrs, options);
  return result.ok ? [] : lines(result.errors);
}

interface Case {
  name: string;
  attrs: Attrs;
  options?: { volumeMountGroup?: string };
  /** Exact errors as `key: message`; omitted means the attributes are valid. */
  errors?: string[];
  /** Matched against the spec (tap's t.match) when valid. */
  spec?: object;
}

const longName = 'a'.repeat(256);
const WITHOUT_ENABLE =
  'cannot use attribute without "csi.cert-manager.io/pkcs12-enable" set to "true" or "false"';
const JKS_WITHOUT_ENABLE =
  'cannot use attribute without "csi.cert-manager.io/jks-enable" set to "true" or "false"';
const BOOL_ONLY = 'may only accept values of "true" or "false"';
const GID_RANGE = 'gid value must be greater than 0 and less than 4294967295';

const cases: Case[] = [
  // issuer
  {
    name: 'issuer-name is required',
    attrs: { 'issuer-name': undefined },
    errors: [`${key('issuer-name')}: Required value: issuer-name is a required field`],
  },
  {
    name: 'an empty issuer-name is missing',
    attrs: { 'issuer-name': '' },
    errors: [`${key('issuer-name')}: Required value: issuer-name is a required field`],
  },
  {
    name: 'issuer kind and group are taken as given',
    attrs: { 'issuer-kind': 'ClusterIssuer', 'issuer-group': 'example.io' },
    spec: { issuerRef: { name: 'my-issuer', kind: 'ClusterIssuer', group: 'example.io' } },
  },
  {
    name: 'empty issuer kind and group are defaulted',
    attrs: { 'issuer-kind': '', 'issuer-group': '' },
    spec: { issuerRef: { name: 'my-issuer', kind: 'Issuer', group: 'cert-manager.io' } },
  },

  // key usages
  {
    name: 'each bad key usage is its own error',
    attrs: { 'key-usages': 'foo, server auth,bar,' },
    errors: [
      `${key('key-usages')}: Invalid value: "": not a valid key usage`,
      `${key('key-usages')}: Invalid value: "bar": not a valid key usage`,
      `${key('key-usages')}: Invalid value: "foo": not a valid key usage`,
    ],
  },
  {
    name: 'key usages are case-sensitive',
    attrs: { 'key-usages': 'Server Auth' },
    errors: [`${key('key-usages')}: Invalid value: "Server Auth": not a valid key usage`],
  },
  {
    name: 'key usages keep their order and are trimmed',
    attrs: { 'key-usages': 'server auth,\n client auth,\tsigning' },
    spec: { usages: ['server auth', 'client auth', 'signing'] },
  },
  {
    name: 'the e2e usages case',
    attrs: {
      'key-usages':
        'signing,digital signature,content commitment,key encipherment,key agreement,data encipherment',
      'is-ca': 'true',
    },
    spec: {
      isCA: true,
      usages: [
        'signing',
        'digital signature',
        'content commitment',
        'key encipherment',
        'key agreement',
        'data encipherment',
      ],
    },
  },

  // duration and renew-before
  {
    name: 'duration must be a Go duration',
    attrs: { duration: 'foo' },
    errors: [
      `${key('duration')}: Invalid value: "foo": must be a valid duration string: time: invalid duration "foo"`,
    ],
  },
  {
    name: 'duration days are not a Go unit',
    attrs: { duration: '90d' },
    errors: [
      `${key('duration')}: Invalid value: "90d": must be a valid duration string: time: unknown unit "d" in duration "90d"`,
    ],
  },
  {
    name: 'zero duration is rejected',
    attrs: { duration: '0s' },
    errors: [`${key('duration')}: Invalid value: "0s": duration must be greater than zero`],
  },
  {
    name: 'bare zero duration is rejected',
    attrs: { duration: '0' },
    errors: [`${key('duration')}: Invalid value: "0": duration must be greater than zero`],
  },
  {
    name: 'negative duration is rejected',
    attrs: { duration: '-1h' },
    errors: [`${key('duration')}: Invalid value: "-1h": duration must be greater than zero`],
  },
  {
    name: 'duration is kept as written',
    attrs: { duration: '123h' },
    spec: { duration: '123h', durationMs: 123 * 3600_000 },
  },
  {
    name: 'an empty duration is the default',
    attrs: { duration: '' },
    spec: { duration: '2160h0m0s', durationMs: 90 * 24 * 3600_000 },
  },
  {
    name: 'renew-before parses',
    attrs: { 'renew-before': '1h30m' },
    spec: { renewBeforeMs: 90 * 60_000 },
  },
  {
    name: 'an empty renew-before is an error',
    attrs: { 'renew-before': '' },
    errors: [
      `${key('renew-before')}: Invalid value: "": must be a valid duration string: time: invalid duration ""`,
    ],
  },
  {
    name: 'zero renew-before is rejected',
    attrs: { 'renew-before': '0s' },
    errors: [`${key('renew-before')}: Invalid value: "0s": renew-before must be greater than zero`],
  },
  {
    name: 'negative renew-before is rejected',
    attrs: { 'renew-before': '-5m' },
    errors: [
      `${key('renew-before')}: Invalid value: "-5m": renew-before must be greater than zero`,
    ],
  },
  {
    name: 'bad renew-before',
    attrs: { 'renew-before': 'soon' },
    errors: [
      `${key('renew-before')}: Invalid value: "soon": must be a valid duration string: time: invalid duration "soon"`,
    ],
  },

  // booleans
  {
    name: 'is-ca accepts only true and false',
    attrs: { 'is-ca': 'True' },
    errors: [`${key('is-ca')}: Invalid value: "True": ${BOOL_ONLY}`],
  },
  {
    name: 'reuse-private-key accepts only true and false',
    attrs: { 'reuse-private-key': 'yes' },
    errors: [`${key('reuse-private-key')}: Invalid value: "yes": ${BOOL_ONLY}`],
  },
  {
    name: 'disable-auto-renew accepts only true and false',
    attrs: { 'disable-auto-renew': '1' },
    errors: [`${key('disable-auto-renew')}: Invalid value: "1": ${BOOL_ONLY}`],
  },
  {
    name: 'booleans set to true',
    attrs: { 'is-ca': 'true', 'reuse-private-key': 'true', 'disable-auto-renew': 'true' },
    spec: { isCA: true, reusePrivateKey: true, disableAutoRenew: true },
  },
  {
    name: 'booleans set to false or empty',
    attrs: { 'is-ca': 'false', 'reuse-private-key': '', 'disable-auto-renew': 'false' },
    spec: { isCA: false, reusePrivateKey: false, disableAutoRenew: false },
  },

  // pkcs12
  {
    name: 'pkcs12 enabled with a password; the filename defaults',
    attrs: { 'pkcs12-enable': 'true', 'pkcs12-password': 'a-random-password' },
    spec: { files: { pkcs12: { filename: 'keystore.p12', password: 'a-random-password' } } },
  },
  {
    name: 'pkcs12 enabled with a filename',
    attrs: {
      'pkcs12-enable': 'true',
      'pkcs12-filename': 'foo.p12',
      'pkcs12-password': 'a-random-password',
    },
    spec: { files: { pkcs12: { filename: 'foo.p12', password: 'a-random-password' } } },
  },
  {
    name: 'pkcs12 enabled without a password',
    attrs: { 'pkcs12-enable': 'true' },
    errors: [
      `${key('pkcs12-password')}: Required value: required attribute when PKCS12 KeyStore is enabled`,
    ],
  },
  {
    name: 'pkcs12 enabled with an empty password',
    attrs: { 'pkcs12-enable': 'true', 'pkcs12-password': '' },
    errors: [
      `${key('pkcs12-password')}: Required value: required attribute when PKCS12 KeyStore is enabled`,
    ],
  },
  {
    name: 'pkcs12 disabled with filename and password is fine',
    attrs: { 'pkcs12-enable': 'false', 'pkcs12-filename': 'foo.p12', 'pkcs12-password': 'pw' },
    spec: { files: { ca: 'ca.crt', certificate: 'tls.crt', privateKey: 'tls.key' } },
  },
  {
    name: 'pkcs12 disabled needs neither filename nor password',
    attrs: { 'pkcs12-enable': 'false' },
  },
  {
    name: 'pkcs12 disabled still checks a given filename',
    attrs: { 'pkcs12-enable': 'false', 'pkcs12-filename': 'a/b.p12' },
    errors: [`${key('pkcs12-filename')}: Invalid value: "a/b.p12": filename must not include '/'`],
  },
  {
    name: 'pkcs12 disabled: its filename may equal another file',
    attrs: { 'pkcs12-enable': 'false', 'pkcs12-filename': 'tls.crt' },
  },
  {
    name: 'pkcs12-enable must be true or false',
    attrs: { 'pkcs12-enable': 'foo', 'pkcs12-password': 'pw' },
    errors: [
      `${key('pkcs12-enable')}: Unsupported value: "foo": supported values: "true", "false"`,
    ],
  },
  {
    name: 'an empty pkcs12-enable is not a value',
    attrs: { 'pkcs12-enable': '' },
    errors: [`${key('pkcs12-enable')}: Unsupported value: "": supported values: "true", "false"`],
  },
  {
    name: 'pkcs12-filename without pkcs12-enable',
    attrs: { 'pkcs12-filename': 'foo.p12' },
    errors: [`${key('pkcs12-filename')}: Invalid value: "foo.p12": ${WITHOUT_ENABLE}`],
  },
  {
    name: 'pkcs12-password without pkcs12-enable is redacted',
    attrs: { 'pkcs12-password': 'hunter2' },
    errors: [`${key('pkcs12-password')}: Invalid value: (redacted): ${WITHOUT_ENABLE}`],
  },

  // combined PEM and JKS (cert-csi's own attributes)
  {
    name: 'combined-pem-file names the combined file',
    attrs: { 'combined-pem-file': 'tls-combined.pem' },
    spec: { files: { combinedPem: 'tls-combined.pem' } },
  },
  {
    name: 'combined-pem-file follows the filename rules',
    attrs: { 'combined-pem-file': '' },
    errors: [`${key('combined-pem-file')}: Invalid value: "": filename must not be empty`],
  },
  {
    name: 'combined-pem-file must differ from the other files',
    attrs: { 'combined-pem-file': 'tls.key' },
    errors: [
      `${key('combined-pem-file')}: Duplicate value: "tls.key"`,
      `${key('privatekey-file')}: Duplicate value: "tls.key"`,
    ],
  },
  {
    name: 'jks enabled with a password; both file names default',
    attrs: { 'jks-enable': 'true', 'jks-password': 'a-random-password' },
    spec: {
      files: {
        jks: {
          filename: 'keystore.jks',
          truststoreFilename: 'truststore.jks',
          password: 'a-random-password',
        },
      },
    },
  },
  {
    name: 'jks enabled with file names',
    attrs: {
      'jks-enable': 'true',
      'jks-filename': 'app.jks',
      'jks-truststore-filename': 'trust.jks',
      'jks-password': 'pw',
    },
    spec: { files: { jks: { filename: 'app.jks', truststoreFilename: 'trust.jks' } } },
  },
  {
    name: 'jks enabled without a password',
    attrs: { 'jks-enable': 'true' },
    errors: [
      `${key('jks-password')}: Required value: required attribute when JKS KeyStore is enabled`,
    ],
  },
  {
    name: 'jks-enable must be true or false',
    attrs: { 'jks-enable': 'yes', 'jks-password': 'pw' },
    errors: [`${key('jks-enable')}: Unsupported value: "yes": supported values: "true", "false"`],
  },
  {
    name: 'jks disabled writes nothing and needs no password',
    attrs: { 'jks-enable': 'false', 'jks-filename': 'tls.crt' },
    spec: { files: { ca: 'ca.crt', certificate: 'tls.crt', privateKey: 'tls.key' } },
  },
  {
    name: 'jks file names, and the password, without jks-enable',
    attrs: {
      'jks-filename': 'a.jks',
      'jks-truststore-filename': 'b.jks',
      'jks-password': 'hunter2',
    },
    errors: [
      `${key('jks-filename')}: Invalid value: "a.jks": ${JKS_WITHOUT_ENABLE}`,
      `${key('jks-password')}: Invalid value: (redacted): ${JKS_WITHOUT_ENABLE}`,
      `${key('jks-truststore-filename')}: Invalid value: "b.jks": ${JKS_WITHOUT_ENABLE}`,
    ],
  },
  {
    name: 'jks file names follow the filename rules',
    attrs: { 'jks-enable': 'true', 'jks-truststore-filename': '../t.jks', 'jks-password': 'pw' },
    errors: [
      `${key('jks-truststore-filename')}: Invalid value: "../t.jks": filename must not include '/'`,
      `${key('jks-truststore-filename')}: Invalid value: "../t.jks": filename must not start with '..'`,
    ],
  },
  {
    name: 'the keystore and the truststore must differ, from each other and the rest',
    attrs: {
      'jks-enable': 'true',
      'jks-filename': 'store.jks',
      'jks-truststore-filename': 'store.jks',
      'pkcs12-enable': 'true',
      'pkcs12-filename': 'store.jks',
      'pkcs12-password': 'pw',
      'jks-password': 'pw',
    },
    errors: [
      `${key('jks-filename')}: Duplicate value: "store.jks"`,
      `${key('jks-truststore-filename')}: Duplicate value: "store.jks"`,
      `${key('pkcs12-filename')}: Duplicate value: "store.jks"`,
    ],
  },

  // file names and uniqueness
  {
    name: 'custom file names',
    attrs: { 'ca-file': 'ca.pem', 'certificate-file': 'cert.pem', 'privatekey-file': 'key.pem' },
    spec: { files: { ca: 'ca.pem', certificate: 'cert.pem', privateKey: 'key.pem' } },
  },
  {
    name: 'two equal file names: Duplicate on each',
    attrs: { 'ca-file': 'tls.crt' },
    errors: [
      `${key('ca-file')}: Duplicate value: "tls.crt"`,
      `${key('certificate-file')}: Duplicate value: "tls.crt"`,
    ],
  },
  {
    name: 'four equal file names: four Duplicates',
    attrs: {
      'ca-file': 'same',
      'certificate-file': 'same',
      'privatekey-file': 'same',
      'pkcs12-enable': 'true',
      'pkcs12-filename': 'same',
      'pkcs12-password': 'pw',
    },
    errors: [
      `${key('ca-file')}: Duplicate value: "same"`,
      `${key('certificate-file')}: Duplicate value: "same"`,
      `${key('pkcs12-filename')}: Duplicate value: "same"`,
      `${key('privatekey-file')}: Duplicate value: "same"`,
    ],
  },
  {
    name: 'the default keystore name collides too',
    attrs: { 'privatekey-file': 'keystore.p12', 'pkcs12-enable': 'true', 'pkcs12-password': 'pw' },
    errors: [
      `${key('pkcs12-filename')}: Duplicate value: "keystore.p12"`,
      `${key('privatekey-file')}: Duplicate value: "keystore.p12"`,
    ],
  },
  {
    name: "'...foobar' starts with '..'",
    attrs: { 'ca-file': '...foobar' },
    errors: [`${key('ca-file')}: Invalid value: "...foobar": filename must not start with '..'`],
  },
  {
    name: "'foo...bar' and 'foobar...' are fine",
    attrs: { 'ca-file': 'foo...bar', 'certificate-file': 'foobar...' },
    spec: { files: { ca: 'foo...bar', certificate: 'foobar...' } },
  },
  {
    name: 'a 255-character name is fine',
    attrs: { 'privatekey-file': 'k'.repeat(255) },
    spec: { files: { privateKey: 'k'.repeat(255) } },
  },
  {
    name: 'a 256-character name is too long',
    attrs: { 'certificate-file': longName },
    errors: [
      `${key('certificate-file')}: Invalid value: "${'a'.repeat(100)}"…(256 characters): filename must be no longer than 255 characters`,
    ],
  },
  {
    name: 'the length limit counts bytes',
    attrs: { 'certificate-file': 'é'.repeat(128) },
    errors: [
      `${key('certificate-file')}: Invalid value: "${'é'.repeat(100)}"…(128 characters): filename must be no longer than 255 characters`,
    ],
  },
  {
    name: 'an absolute name breaks two rules',
    attrs: { 'ca-file': '/abs' },
    errors: [
      `${key('ca-file')}: Invalid value: "/abs": filename must not be an absolute path`,
      `${key('ca-file')}: Invalid value: "/abs": filename must not include '/'`,
    ],
  },
  {
    name: 'no sub-directories',
    attrs: { 'certificate-file': 'a/b' },
    errors: [`${key('certificate-file')}: Invalid value: "a/b": filename must not include '/'`],
  },
  {
    name: "'..' is rejected",
    attrs: { 'privatekey-file': '..' },
    errors: [`${key('privatekey-file')}: Invalid value: "..": filename must not start with '..'`],
  },
  {
    name: "'../x' is rejected twice",
    attrs: { 'privatekey-file': '../x' },
    errors: [
      `${key('privatekey-file')}: Invalid value: "../x": filename must not include '/'`,
      `${key('privatekey-file')}: Invalid value: "../x": filename must not start with '..'`,
    ],
  },
  {
    name: "the atomic writer's '..data' is reserved",
    attrs: { 'ca-file': '..data' },
    errors: [`${key('ca-file')}: Invalid value: "..data": filename must not start with '..'`],
  },
  {
    name: "'.' is rejected",
    attrs: { 'ca-file': '.' },
    errors: [`${key('ca-file')}: Invalid value: ".": filename must not be '.'`],
  },
  {
    name: 'an empty name is rejected',
    attrs: { 'ca-file': '' },
    errors: [`${key('ca-file')}: Invalid value: "": filename must not be empty`],
  },
  {
    name: 'backslash and NUL are rejected',
    attrs: { 'ca-file': 'a\\b', 'certificate-file': 'a\0b' },
    errors: [
      `${key('ca-file')}: Invalid value: "a\\\\b": filename must not include '\\'`,
      `${key('certificate-file')}: Invalid value: "a\\x00b": filename must not include NUL characters`,
    ],
  },
  {
    name: 'leading and trailing spaces',
    attrs: { 'ca-file': ' ca.crt', 'certificate-file': 'tls.crt\t' },
    errors: [
      `${key('ca-file')}: Invalid value: " ca.crt": filename must not include leading or trailing spaces`,
      `${key('certificate-file')}: Invalid value: "tls.crt\\t": filename must not include leading or trailing spaces`,
    ],
  },

  // keys
  {
    name: 'RSA 1024 is too small',
    attrs: { 'key-size': '1024' },
    errors: [
      `${key('key-size')}: Invalid value: "1024": key size must be at least 2048 when using the RSA key algorithm`,
    ],
  },
  {
    name: 'RSA 2048',
    attrs: { 'key-size': '2048' },
    spec: { key: { algorithm: 'RSA', size: 2048 } },
  },
  {
    name: 'RSA 8192',
    attrs: { 'key-size': '8192' },
    spec: { key: { algorithm: 'RSA', size: 8192 } },
  },
  {
    name: 'RSA 8193 is too large',
    attrs: { 'key-algorithm': 'RSA', 'key-size': '8193' },
    errors: [
      `${key('key-size')}: Invalid value: "8193": key size must not exceed 8192 when using the RSA key algorithm`,
    ],
  },
  {
    name: 'a key size must be an integer',
    attrs: { 'key-size': 'big' },
    errors: [
      `${key('key-size')}: Invalid value: "big": strconv.Atoi: parsing "big": invalid syntax`,
    ],
  },
  {
    name: 'a key size beyond int64',
    attrs: { 'key-size': '99999999999999999999' },
    errors: [
      `${key('key-size')}: Invalid value: "99999999999999999999": strconv.Atoi: parsing "99999999999999999999": value out of range`,
    ],
  },
  {
    name: 'ECDSA defaults to P-256 and PKCS8',
    attrs: { 'key-algorithm': 'ecdsa' },
    spec: { key: { algorithm: 'ECDSA', size: 256, encoding: 'PKCS8' } },
  },
  {
    name: 'ECDSA 255 is not a curve',
    attrs: { 'key-algorithm': 'ECDSA', 'key-size': '255' },
    errors: [`${key('key-size')}: Unsupported value: "255": supported values: "256", "384", "521"`],
  },
  {
    name: 'ECDSA 384',
    attrs: { 'key-algorithm': 'ECDSA', 'key-size': '384' },
    spec: { key: { algorithm: 'ECDSA', size: 384 } },
  },
  {
    name: 'ECDSA 521',
    attrs: { 'key-algorithm': 'ECDSA', 'key-size': '521' },
    spec: { key: { algorithm: 'ECDSA', size: 521 } },
  },
  {
    name: 'ECDSA with a non-integer size',
    attrs: { 'key-algorithm': 'ECDSA', 'key-size': 'P-256' },
    errors: [
      `${key('key-size')}: Invalid value: "P-256": strconv.Atoi: parsing "P-256": invalid syntax`,
    ],
  },
  {
    name: 'ECDSA with PKCS1',
    attrs: { 'key-algorithm': 'ECDSA', 'key-encoding': 'PKCS1' },
    errors: [
      `${key('key-encoding')}: Invalid value: "PKCS1": pkcs1 cannot be used with ecdsa. use pkcs8 or pkcs12 instead`,
    ],
  },
  {
    name: 'Ed25519 has no size and defaults to PKCS8',
    attrs: { 'key-algorithm': 'ED25519' },
    spec: { key: { algorithm: 'Ed25519', size: undefined, encoding: 'PKCS8' } },
  },
  {
    name: 'Ed25519 with a size',
    attrs: { 'key-algorithm': 'Ed25519', 'key-size': '256' },
    errors: [
      `${key('key-size')}: Invalid value: "256": size must be empty when using Ed25519 as the key algorithm`,
    ],
  },
  {
    name: 'Ed25519 with PKCS1',
    attrs: { 'key-algorithm': 'ed25519', 'key-encoding': 'pkcs1' },
    errors: [
      `${key('key-encoding')}: Invalid value: "pkcs1": pkcs1 cannot be used with ed25519. use pkcs8 or pkcs12 instead`,
    ],
  },
  {
    name: 'an unknown algorithm',
    attrs: { 'key-algorithm': 'foo', 'key-size': '1' },
    errors: [
      `${key('key-algorithm')}: Unsupported value: "foo": supported values: "RSA", "ECDSA", "Ed25519"`,
    ],
  },
  {
    name: 'an unknown encoding',
    attrs: { 'key-encoding': 'pkcs12' },
    errors: [
      `${key('key-encoding')}: Unsupported value: "pkcs12": supported values: "PKCS1", "PKCS8"`,
    ],
  },
  {
    name: 'encodings are case-insensitive',
    attrs: { 'key-algorithm': 'Rsa', 'key-encoding': 'pkcs8' },
    spec: { key: { algorithm: 'RSA', size: 2048, encoding: 'PKCS8' } },
  },
  {
    name: 'a bad encoding does not hide a bad size',
    attrs: { 'key-encoding': 'DER', 'key-size': '1024' },
    errors: [
      `${key('key-encoding')}: Unsupported value: "DER": supported values: "PKCS1", "PKCS8"`,
      `${key('key-size')}: Invalid value: "1024": key size must be at least 2048 when using the RSA key algorithm`,
    ],
  },

  // unknown and legacy keys
  {
    name: 'a typo under csi.cert-manager.io is an unknown attribute',
    attrs: { 'dns-name': 'example.com' },
    errors: [`${key('dns-name')}: unknown attribute (did you mean ${key('dns-names')}?)`],
  },
  {
    name: 'the legacy prefix is an alias',
    attrs: { 'issuer-name': undefined, 'csi.certmanager.k8s.io/issuer-name': 'legacy-issuer' },
    spec: { issuerRef: { name: 'legacy-issuer' } },
  },
  {
    name: 'legacy and current keys with one value agree',
    attrs: { 'csi.certmanager.k8s.io/issuer-name': 'my-issuer' },
    spec: { issuerRef: { name: 'my-issuer' } },
  },
  {
    name: 'legacy and current keys with different values conflict',
    attrs: { 'csi.certmanager.k8s.io/issuer-name': 'other-issuer' },
    errors: [
      `${LEGACY_ATTRIBUTE_PREFIX}issuer-name: conflicts with ${ATTRIBUTE_PREFIX}issuer-name`,
    ],
  },
  {
    name: 'errors name the legacy key the value came under',
    attrs: { 'csi.certmanager.k8s.io/is-ca': 'yes' },
    errors: [`${LEGACY_ATTRIBUTE_PREFIX}is-ca: Invalid value: "yes": ${BOOL_ONLY}`],
  },
  {
    name: 'an unknown legacy key',
    attrs: { 'csi.certmanager.k8s.io/dns-name': 'x' },
    errors: [
      `${LEGACY_ATTRIBUTE_PREFIX}dns-name: unknown attribute (did you mean ${LEGACY_ATTRIBUTE_PREFIX}dns-names?)`,
    ],
  },
  {
    name: 'an unknown key far from every attribute suggests none',
    attrs: { 'no-such-thing': 'x' },
    errors: [`${key('no-such-thing')}: unknown attribute`],
  },

  // fs-group
  { name: 'fs-group 2000', attrs: { 'fs-group': '2000' }, spec: { fsGroup: 2000 } },
  {
    name: 'fs-group 4294967294',
    attrs: { 'fs-group': '4294967294' },
    spec: { fsGroup: 4294967294 },
  },
  {
    name: 'fs-group 0',
    attrs: { 'fs-group': '0' },
    errors: [`${key('fs-group')}: ${GID_RANGE}: 0`],
  },
  {
    name: 'fs-group -1',
    attrs: { 'fs-group': '-1' },
    errors: [`${key('fs-group')}: ${GID_RANGE}: -1`],
  },
  {
    name: 'fs-group 4294967295 means "no change" to chown',
    attrs: { 'fs-group': '4294967295' },
    errors: [`${key('fs-group')}: ${GID_RANGE}: 4294967295`],
  },
  {
    name: 'fs-group abc',
    attrs: { 'fs-group': 'abc' },
    errors: [
      `${key('fs-group')}: value must be a valid integer: strconv.ParseInt: parsing "abc": invalid syntax`,
    ],
  },
  {
    name: 'the fs-group attribute beats volume_mount_group',
    attrs: { 'fs-group': '3000' },
    options: { volumeMountGroup: '0' },
    spec: { fsGroup: 3000 },
  },
  {
    name: 'volume_mount_group applies without the attribute',
    attrs: { 'fs-group': '' },
    options: { volumeMountGroup: '2000' },
    spec: { fsGroup: 2000 },
  },
  {
    name: 'a bad volume_mount_group',
    attrs: {},
    options: { volumeMountGroup: '4294967296' },
    errors: [`volume_mount_group: ${GID_RANGE}: 4294967296`],
  },
  {
    name: 'an empty volume_mount_group is none',
    attrs: {},
    options: { volumeMountGroup: '' },
    spec: { fsGroup: undefined },
  },

  // kubelet keys
  {
    name: 'non-ephemeral volumes are rejected',
    attrs: { 'csi.storage.k8s.io/ephemeral': 'false' },
    errors: ['csi.storage.k8s.io/ephemeral: only ephemeral volume types are supported'],
  },
  {
    name: 'a missing ephemeral key is not ephemeral',
    attrs: { 'csi.storage.k8s.io/ephemeral': undefined },
    errors: ['csi.storage.k8s.io/ephemeral: only ephemeral volume types are supported'],
  },
  {
    name: 'the pod namespace is required',
    attrs: { 'csi.storage.k8s.io/pod.namespace': undefined },
    errors: [
      'csi.storage.k8s.io/pod.namespace: Required value: set by kubelet when the CSIDriver sets podInfoOnMount: true; the CertificateRequest is created in the pod namespace',
    ],
  },
  {
    name: 'an empty pod namespace is missing',
    attrs: { 'csi.storage.k8s.io/pod.namespace': '' },
    errors: [
      'csi.storage.k8s.io/pod.namespace: Required value: set by kubelet when the CSIDriver sets podInfoOnMount: true; the CertificateRequest is created in the pod namespace',
    ],
  },
  {
    name: 'the pod name is required',
    attrs: { 'csi.storage.k8s.io/pod.name': undefined },
    errors: [
      'csi.storage.k8s.io/pod.name: Required value: set by kubelet when the CSIDriver sets podInfoOnMount: true; the CertificateRequest is created in the pod namespace',
    ],
  },
  {
    name: 'uid and service account may be missing',
    attrs: {
      'csi.storage.k8s.io/pod.uid': undefined,
      'csi.storage.k8s.io/serviceAccount.name': undefined,
    },
    spec: {
      pod: { name: 'my-pod-name', namespace: 'my-namespace', uid: '', serviceAccountName: '' },
    },
  },

  // subject and SANs
  {
    name: 'subject fields; serialnumber is not expanded',
    attrs: {
      'common-name': 'cn',
      organizations: '"10 Downing Street, Westminster",Manchester',
      organizationalunits: 'a,b',
      countries: 'GB',
      provinces: 'London',
      localities: '$POD_NAMESPACE',
      streetaddresses: 'Street 1',
      postalcodes: 'SW1A 2AA',
      serialnumber: '$POD_UID',
    },
    spec: {
      subject: {
        commonName: 'cn',
        organizations: ['10 Downing Street, Westminster', 'Manchester'],
        organizationalUnits: ['a', 'b'],
        countries: ['GB'],
        provinces: ['London'],
        localities: ['my-namespace'],
        streetAddresses: ['Street 1'],
        postalCodes: ['SW1A 2AA'],
        serialNumber: '$POD_UID',
      },
    },
  },
  {
    name: 'a subject list that is not one CSV record',
    attrs: { organizations: 'a"b', countries: 'GB\nFR' },
    errors: [
      `${key('countries')}: refusing to use "GB\\nFR" as input as it parses as multiple lines of CSV`,
      `${key('organizations')}: failed to parse "a\\"b" as CSV: parse error on line 1, column 2: bare " in non-quoted-field`,
    ],
  },
  {
    name: 'a literal subject replaces the other subject attributes',
    attrs: {
      'literal-subject': 'CN=${POD_NAME},OU=0:my-pod\\;1:my-namespace,O=foo.bar.com',
      'common-name': 'ignored',
    },
    spec: {
      literalSubject: 'CN=my-pod-name,OU=0:my-pod\\;1:my-namespace,O=foo.bar.com',
      subject: {},
    },
  },
  {
    name: 'a literal subject that expands to nothing is unset',
    attrs: {
      'literal-subject': '$POD_UID',
      'common-name': 'cn',
      'csi.storage.k8s.io/pod.uid': undefined,
    },
    spec: { literalSubject: undefined, subject: { commonName: 'cn' } },
  },
  {
    name: 'a bad literal subject',
    attrs: { 'literal-subject': 'CN=a,XX=b' },
    errors: [`${key('literal-subject')}: literal subject: unknown attribute type "XX"`],
  },
  {
    name: 'IP SANs are trimmed; empty elements are dropped',
    attrs: { 'ip-sans': '1.2.3.4,\n \t 5.6.7.8,,::1,' },
    spec: { ipAddresses: ['1.2.3.4', '5.6.7.8', '::1'] },
  },
  {
    name: 'bad IP SANs are listed together',
    attrs: { 'ip-sans': 'foo,1.2.3.4,bar' },
    errors: [`${key('ip-sans')}: failed to parse IP address: ["foo","bar"]`],
  },
  {
    name: 'IP SANs offer only the pod IP variables',
    attrs: { 'ip-sans': '1.2.3.4,$POD_NAME' },
    errors: [`${key('ip-sans')}: undefined variable "POD_NAME", known variables: [POD_IP POD_IPS]`],
  },
  {
    name: 'bad URI SANs',
    attrs: { 'uri-sans': 'spiffe://ok,x,foo://a b' },
    errors: [`${key('uri-sans')}: invalid URI "x", invalid URI "foo://a b"`],
  },
  {
    name: 'a trailing comma adds no DNS SAN',
    attrs: { 'dns-names': 'a.example.com,' },
    spec: { dnsNames: ['a.example.com'] },
  },
  {
    name: 'DNS SANs must be ASCII host names',
    attrs: { 'dns-names': 'ok.example.com,bücher.example' },
    errors: [
      `${key('dns-names')}: Invalid value: "bücher.example": must be a DNS name: dot-separated labels of ASCII letters, digits and '-' (not first or last), each at most 63 characters, optionally after a leading '*.'`,
    ],
  },

  // pass-through annotations
  {
    name: 'other prefixes become annotations; keys without a slash are ignored',
    attrs: {
      'custom.group.io/custom-key': 'custom-value',
      'example.com/Some_Name.1': '$POD_NAME',
      'csi.storage.k8s.io/serviceAccount.tokens': '{"":{"token":"secret-token"}}',
      'csi.storage.k8s.io/something.else': 'x',
    },
    spec: {
      annotations: {
        'custom.group.io/custom-key': 'custom-value',
        'example.com/Some_Name.1': '$POD_NAME',
      },
    },
  },
  {
    name: 'annotation keys the API server would refuse',
    attrs: {
      '/x': 'a',
      'a/b/c': 'b',
      'Example_Com/x': 'c',
      'example.com/-x': 'd',
      'example.com/': 'e',
    },
    errors: [
      '/x: not a valid annotation key: prefix part must be non-empty',
      "Example_Com/x: not a valid annotation key: prefix part must be a lowercase RFC 1123 subdomain: alphanumeric characters, '-' or '.', starting and ending with an alphanumeric character",
      "a/b/c: not a valid annotation key: it must contain at most one '/'",
      'example.com/: not a valid annotation key: name part must be non-empty',
      "example.com/-x: not a valid annotation key: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
    ],
  },
  {
    name: 'annotation key length limits',
    attrs: { [`${'a'.repeat(254)}/x`]: 'a', [`example.com/${'n'.repeat(64)}`]: 'b' },
    errors: [
      `${'a'.repeat(254)}/x: not a valid annotation key: prefix part must be no more than 253 characters`,
      `example.com/${'n'.repeat(64)}: not a valid annotation key: name part must be no more than 63 characters`,
    ],
  },
];

t.test('attribute table', async (t) => {
  for (const c of cases) {
    const result = parse(c.attrs, c.options);
    if (c.errors) {
      t.same(result.ok ? [] : lines(result.errors), [...c.errors].sort(), c.name);
    } else if (result.ok) {
      if (c.spec) t.match(result.spec, c.spec, c.name);
      else t.pass(c.name);
    } else {
      t.fail(`${c.name}: unexpected errors ${formatAttributeErrors(result.errors)}`);
    }
  }
});

t.test('defaults for an issuer-only context', async (t) => {
  const result = parse({});
  t.ok(result.ok);
  if (!result.ok) return;
  t.same(result.deprecatedKeys, []);
  t.same(result.spec, {
    issuerRef: { name: 'my-issuer', kind: 'Issuer', group: 'cert-manager.io' },
    subject: {},
    dnsNames: [],
    ipAddresses: [],
    uris: [],
    duration: '2160h0m0s',
    durationMs: 90 * 24 * 60 * 60 * 1000,
    isCA: false,
    usages: ['digital signature', 'key encipherment'],
    key: { algorithm: 'RSA', size: 2048, encoding: 'PKCS1' },
    files: { ca: 'ca.crt', certificate: 'tls.crt', privateKey: 'tls.key' },
    reusePrivateKey: false,
    disableAutoRenew: false,
    annotations: {},
    pod: {
      name: 'my-pod-name',
      namespace: 'my-namespace',
      uid: 'my-pod-uuid',
      serviceAccountName: 'my-service-account',
    },
  });
  t.notOk('literalSubject' in result.spec, 'no literal subject');
  t.notOk('fsGroup' in result.spec, 'no fs group');
  t.notOk('renewBeforeMs' in result.spec, 'no renew-before');
});

t.test('variables in CN, DNS and URI SANs (the e2e variables case)', async (t) => {
  const result = parse({
    'common-name': '$POD_NAME.${POD_NAMESPACE}',
    'dns-names':
      '$POD_NAME-my-dns-$POD_NAMESPACE-${POD_UID},${POD_NAME},\n${POD_NAME}.${POD_NAMESPACE},$POD_NAME.${POD_NAMESPACE}.svc,${POD_UID},${SERVICE_ACCOUNT_NAME}',
    'uri-sans':
      'spiffe://foo.bar/${POD_NAMESPACE}/$POD_NAME/$POD_UID,\nfile://foo-bar,\nbar://${POD_UID}',
  });
  t.ok(result.ok);
  if (!result.ok) return;
  t.equal(result.spec.subject.commonName, 'my-pod-name.my-namespace');
  t.same(result.spec.dnsNames, [
    'my-pod-name-my-dns-my-namespace-my-pod-uuid',
    'my-pod-name',
    'my-pod-name.my-namespace',
    'my-pod-name.my-namespace.svc',
    'my-pod-uuid',
    'my-service-account',
  ]);
  t.same(result.spec.uris, [
    'spiffe://foo.bar/my-namespace/my-pod-name/my-pod-uuid',
    'file://foo-bar',
    'bar://my-pod-uuid',
  ]);
});

t.test('undefined variables', async (t) => {
  const known = 'known variables: [POD_NAME POD_NAMESPACE POD_UID SERVICE_ACCOUNT_NAME]';
  t.same(errorsOf({ 'common-name': '$Foo' }), [
    `${key('common-name')}: undefined variable "Foo", ${known}`,
  ]);
  t.same(
    errorsOf({
      'dns-names': 'foo-${POD_NAME}-,,$POD_NAMESPACE,${POD_UID}.$Foo${Bar}',
      'uri-sans': 'spiffe://$$',
      organizations: '$POD_IP',
      'literal-subject': 'CN=$1',
    }),
    [
      `${key('dns-names')}: undefined variable "Foo", undefined variable "Bar", ${known}`,
      `${key('literal-subject')}: undefined variable "1", ${known}`,
      `${key('organizations')}: undefined variable "POD_IP", ${known}`,
      `${key('uri-sans')}: undefined variable "$", ${known}`,
    ],
  );
  // Not expanded: the text stays as written.
  const result = parse({ serialnumber: '$POD_NAME', 'ca-file': '$POD_NAME' });
  t.ok(result.ok);
  if (result.ok) {
    t.equal(result.spec.subject.serialNumber, '$POD_NAME');
    t.equal(result.spec.files.ca, '$POD_NAME');
  }
});

t.test('every bad key appears in one result', async (t) => {
  const result = parse({
    'issuer-name': undefined,
    duration: '0s',
    'is-ca': 'maybe',
    'key-usages': 'nope',
    'key-algorithm': 'DSA',
    'ca-file': '/ca',
    'fs-group': '0',
    'dns-name': 'typo',
    'common-name': '$NOPE',
    'ip-sans': 'not-an-ip',
    'csi.storage.k8s.io/pod.namespace': undefined,
  });
  t.notOk(result.ok);
  if (result.ok) return;
  const keys = new Set(result.errors.map((e) => e.key));
  t.same(
    [...keys].sort(),
    [
      key('ca-file'),
      key('common-name'),
      key('dns-name'),
      key('duration'),
      key('fs-group'),
      key('ip-sans'),
      key('is-ca'),
      key('issuer-name'),
      key('key-algorithm'),
      key('key-usages'),
      'csi.storage.k8s.io/pod.namespace',
    ].sort(),
  );
});

t.test('legacy keys are reported as deprecated', async (t) => {
  const result = parseVolumeAttributes(
    context(
      {
        'csi.certmanager.k8s.io/issuer-name': 'legacy',
        'csi.certmanager.k8s.io/dns-names': 'a.example.com',
        'csi.certmanager.k8s.io/duration': '1h',
        duration: '1h',
      },
      {},
    ),
  );
  t.ok(result.ok);
  if (!result.ok) return;
  t.same(result.deprecatedKeys, [
    'csi.certmanager.k8s.io/dns-names',
    'csi.certmanager.k8s.io/duration',
    'csi.certmanager.k8s.io/issuer-name',
  ]);
  t.equal(result.spec.issuerRef.name, 'legacy');
  t.same(result.spec.dnsNames, ['a.example.com']);
  t.same(result.spec.annotations, {}, 'legacy keys are not annotations');
});

t.test('formatAttributeErrors', async (t) => {
  t.equal(
    formatAttributeErrors([
      { key: 'b', message: 'two' },
      { key: 'a', message: 'one' },
      { key: 'b', message: 'one' },
      { key: 'a', message: 'one' },
    ]),
    'a: one; b: two; b: one',
  );
  t.equal(formatAttributeErrors([]), '');
  const result = parse({
    'issuer-name': '',
    'key-size': '1',
  });
  t.notOk(result.ok);
  if (!result.ok) {
    t.equal(
      formatAttributeErrors(result.errors),
      `${key('issuer-name')}: Required value: issuer-name is a required field; ${key('key-size')}: Invalid value: "1": key size must be at least 2048 when using the RSA key algorithm`,
    );
  }
});

t.test('secrets never appear in errors', async (t) => {
  const password = 'Sup3r-S3cret-P@ss';
  const token = 'eyJhbGciOiJSUzI1NiJ9.token-value';
  const contexts: Attrs[] = [
    { 'pkcs12-password': password },
    { 'pkcs12-password': password, 'pkcs12-enable': 'maybe', 'pkcs12-filename': '/x' },
    { 'pkcs12-password': password, 'csi.certmanager.k8s.io/pkcs12-password': `${password}2` },
    { 'csi.certmanager.k8s.io/pkcs12-password': password, 'issuer-name': '' },
    { 'jks-password': password },
    { 'jks-password': password, 'jks-enable': 'maybe', 'jks-filename': '/x' },
    { 'jks-password': password, 'csi.certmanager.k8s.io/jks-password': `${password}2` },
    {
      'csi.storage.k8s.io/serviceAccount.tokens': JSON.stringify({ '': { token } }),
      'csi.storage.k8s.io/ephemeral': 'no',
      'issuer-name': '',
    },
  ];
  for (const attrs of contexts) {
    const result = parse(attrs);
    t.notOk(result.ok);
    if (result.ok) continue;
    const text = formatAttributeErrors(result.errors);
    t.notMatch(text, password);
    t.notMatch(text, token);
  }
  const ok = parse({
    'pkcs12-enable': 'true',
    'pkcs12-password': password,
    'csi.storage.k8s.io/serviceAccount.tokens': JSON.stringify({ '': { token } }),
  });
  t.ok(ok.ok);
  if (ok.ok) t.notMatch(JSON.stringify(ok.spec.annotations), token, 'tokens are not annotations');
});

t.test('keys without a slash are ignored', async (t) => {
  const result = parseVolumeAttributes({ ...context({}), 'no-slash': 'ignored', issuer: 'x' });
  t.ok(result.ok);
  if (result.ok) t.same(result.spec.annotations, {});
});

t.test('the input is not modified', async (t) => {
  const input = context({ 'dns-names': '$POD_NAME', 'key-algorithm': 'ecdsa' });
  const copy = { ...input };
  parseVolumeAttributes(input);
  t.same(input, copy);
});
