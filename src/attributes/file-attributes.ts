import type { VolumeCertificateSpec } from '../api/volume-spec.js';
import {
  duplicateValue,
  invalidValue,
  requiredValue,
  unsupportedValue,
} from './attribute-errors.js';
import type { AttributeName } from './attribute-keys.js';
import { ATTRIBUTE_PREFIX } from './attribute-keys.js';
import type { AttributeReader } from './attribute-reader.js';
import { filenameProblems } from './filename-rules.js';

const DEFAULT_PKCS12_FILENAME = 'keystore.p12';
// cert-manager's Certificate keystore file names (keystores.jks).
const DEFAULT_JKS_FILENAME = 'keystore.jks';
const DEFAULT_JKS_TRUSTSTORE_FILENAME = 'truststore.jks';
const withoutEnable = (enable: AttributeName) =>
  `cannot use attribute without "${ATTRIBUTE_PREFIX}${enable}" set to "true" or "false"`;
const requiredWhenEnabled = (store: string) => `required attribute when ${store} is enabled`;

// Unlike csi-driver, `pkcs12-enable: "false"` needs no file name or password,
// and an empty `pkcs12-enable` is rejected rather than half-defaulted.

/** Reads the file names (single path segments, all distinct) and the optional keystores and combined PEM. */
export function readFileAttributes(attrs: AttributeReader): VolumeCertificateSpec['files'] {
  const files: VolumeCertificateSpec['files'] = {
    ca: readFilename(attrs, 'ca-file', 'ca.crt'),
    certificate: readFilename(attrs, 'certificate-file', 'tls.crt'),
    privateKey: readFilename(attrs, 'privatekey-file', 'tls.key'),
  };
  const written: Array<[AttributeName, string]> = [
    ['ca-file', files.ca],
    ['certificate-file', files.certificate],
    ['privatekey-file', files.privateKey],
  ];
  const pkcs12 = readPkcs12(attrs);
  if (pkcs12 !== undefined) {
    files.pkcs12 = pkcs12;
    written.push(['pkcs12-filename', pkcs12.filename]);
  }
  // cert-csi's own outputs (docs/volume-attributes.md, "Extra outputs"); their names join the uniqueness check.
  const combinedPem = attrs.value('combined-pem-file');
  if (combinedPem !== undefined) {
    files.combinedPem = readFilename(attrs, 'combined-pem-file', combinedPem);
    written.push(['combined-pem-file', combinedPem]);
  }
  const jks = readJks(attrs);
  if (jks !== undefined) {
    files.jks = jks;
    written.push(
      ['jks-filename', jks.filename],
      ['jks-truststore-filename', jks.truststoreFilename],
    );
  }
  for (const [name, filename] of written) {
    if (written.some(([other, otherName]) => other !== name && otherName === filename)) {
      attrs.fail(name, duplicateValue(filename));
    }
  }
  return files;
}

// A given name is checked even when it defaults nothing: a bad one is a typo to report.
function readFilename(attrs: AttributeReader, name: AttributeName, fallback: string): string {
  const filename = attrs.value(name);
  if (filename === undefined) return fallback;
  for (const problem of filenameProblems(filename))
    attrs.fail(name, invalidValue(filename, problem));
  return filename;
}

function readPkcs12(attrs: AttributeReader): { filename: string; password: string } | undefined {
  return readKeystore(
    attrs,
    {
      enable: 'pkcs12-enable',
      password: 'pkcs12-password',
      files: ['pkcs12-filename'],
      label: 'PKCS12 KeyStore',
    },
    () => ({ filename: readFilename(attrs, 'pkcs12-filename', DEFAULT_PKCS12_FILENAME) }),
  );
}

function readJks(
  attrs: AttributeReader,
): { filename: string; truststoreFilename: string; password: string } | undefined {
  return readKeystore(
    attrs,
    {
      enable: 'jks-enable',
      password: 'jks-password',
      files: ['jks-filename', 'jks-truststore-filename'],
      label: 'JKS KeyStore',
    },
    () => ({
      filename: readFilename(attrs, 'jks-filename', DEFAULT_JKS_FILENAME),
      truststoreFilename: readFilename(
        attrs,
        'jks-truststore-filename',
        DEFAULT_JKS_TRUSTSTORE_FILENAME,
      ),
    }),
  );
}

/**
 * A password-protected keystore: csi-driver's pkcs12-* rules, which the jks-* attributes
 * share. File names (read by readFiles, defaulted) and password only with the enable key; the
 * password is required when it is "true", and only then is the keystore written.
 */
function readKeystore<T extends object>(
  attrs: AttributeReader,
  keys: {
    enable: AttributeName;
    password: AttributeName;
    files: readonly AttributeName[];
    label: string;
  },
  readFiles: () => T,
): (T & { password: string }) | undefined {
  const enable = attrs.value(keys.enable);
  const password = attrs.value(keys.password);
  if (enable === undefined) {
    for (const name of keys.files) {
      const filename = attrs.value(name);
      if (filename !== undefined)
        attrs.fail(name, invalidValue(filename, withoutEnable(keys.enable)));
    }
    if (password !== undefined)
      attrs.fail(keys.password, invalidValue(password, withoutEnable(keys.enable), true));
    return undefined;
  }
  const files = readFiles();
  if (enable !== 'true') {
    if (enable !== 'false') attrs.fail(keys.enable, unsupportedValue(enable, ['true', 'false']));
    return undefined;
  }
  if (!password) {
    attrs.fail(keys.password, requiredValue(requiredWhenEnabled(keys.label)));
    return undefined;
  }
  return { ...files, password };
}
