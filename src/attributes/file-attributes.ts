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
const ENABLE_KEY = `${ATTRIBUTE_PREFIX}pkcs12-enable`;
const WITHOUT_ENABLE = `cannot use attribute without "${ENABLE_KEY}" set to "true" or "false"`;
const REQUIRED_WHEN_ENABLED = 'required attribute when PKCS12 KeyStore is enabled';

// Unlike csi-driver, `pkcs12-enable: "false"` needs no file name or password,
// and an empty `pkcs12-enable` is rejected rather than half-defaulted.

/** Reads the file names (single path segments, all distinct) and the optional PKCS#12 keystore. */
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
  const enable = attrs.value('pkcs12-enable');
  const password = attrs.value('pkcs12-password');
  if (enable === undefined) {
    const filename = attrs.value('pkcs12-filename');
    if (filename !== undefined)
      attrs.fail('pkcs12-filename', invalidValue(filename, WITHOUT_ENABLE));
    if (password !== undefined)
      attrs.fail('pkcs12-password', invalidValue(password, WITHOUT_ENABLE, true));
    return undefined;
  }
  const filename = readFilename(attrs, 'pkcs12-filename', DEFAULT_PKCS12_FILENAME);
  if (enable !== 'true') {
    if (enable !== 'false')
      attrs.fail('pkcs12-enable', unsupportedValue(enable, ['true', 'false']));
    return undefined;
  }
  if (!password) {
    attrs.fail('pkcs12-password', requiredValue(REQUIRED_WHEN_ENABLED));
    return undefined;
  }
  return { filename, password };
}
