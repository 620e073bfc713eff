import type {
  KeyAlgorithmName,
  KeyEncodingName,
  VolumeCertificateSpec,
} from '../api/volume-spec.js';
import { parseGoInteger } from '../base/go-text.js';
import { invalidValue, unsupportedValue } from './attribute-errors.js';
import type { AttributeReader } from './attribute-reader.js';

const ALGORITHMS: ReadonlyMap<string, KeyAlgorithmName> = new Map([
  ['rsa', 'RSA'],
  ['ecdsa', 'ECDSA'],
  ['ed25519', 'Ed25519'],
]);
const ENCODINGS: ReadonlyMap<string, KeyEncodingName> = new Map([
  ['pkcs1', 'PKCS1'],
  ['pkcs8', 'PKCS8'],
]);
const RSA_MIN_BITS = 2048;
const RSA_MAX_BITS = 8192;
const ECDSA_SIZES = ['256', '384', '521'];

// Unlike csi-driver, a bad encoding does not hide a bad size: every broken rule is reported.

/** Reads key-algorithm, key-size and key-encoding with csi-driver's defaults and rules. */
export function readKeyAttributes(attrs: AttributeReader): VolumeCertificateSpec['key'] {
  const algorithmText = attrs.nonEmpty('key-algorithm');
  let algorithm: KeyAlgorithmName | undefined = 'RSA';
  if (algorithmText !== undefined) {
    algorithm = ALGORITHMS.get(algorithmText.toLowerCase());
    if (algorithm === undefined) {
      attrs.fail('key-algorithm', unsupportedValue(algorithmText, [...ALGORITHMS.values()]));
    }
  }

  const encodingText = attrs.nonEmpty('key-encoding');
  let encoding: KeyEncodingName | undefined = algorithm === 'RSA' ? 'PKCS1' : 'PKCS8';
  if (encodingText !== undefined) {
    encoding = ENCODINGS.get(encodingText.toLowerCase());
    if (encoding === undefined) {
      attrs.fail('key-encoding', unsupportedValue(encodingText, [...ENCODINGS.values()]));
    } else if (encoding === 'PKCS1' && algorithm !== 'RSA' && algorithm !== undefined) {
      const lower = algorithm.toLowerCase();
      attrs.fail(
        'key-encoding',
        invalidValue(
          encodingText,
          `pkcs1 cannot be used with ${lower}. use pkcs8 or pkcs12 instead`,
        ),
      );
    }
  }

  const size = readKeySize(attrs, algorithm);
  // A spec is only returned without errors, so these fallbacks never reach a caller.
  const key: VolumeCertificateSpec['key'] = {
    algorithm: algorithm ?? 'RSA',
    encoding: encoding ?? 'PKCS8',
  };
  if (size !== undefined) key.size = size;
  return key;
}

function readKeySize(
  attrs: AttributeReader,
  algorithm: KeyAlgorithmName | undefined,
): number | undefined {
  const text = attrs.nonEmpty('key-size');
  if (algorithm === 'Ed25519') {
    if (text !== undefined) {
      attrs.fail(
        'key-size',
        invalidValue(text, 'size must be empty when using Ed25519 as the key algorithm'),
      );
    }
    return undefined;
  }
  if (algorithm === undefined) return undefined;
  if (text === undefined) return algorithm === 'RSA' ? RSA_MIN_BITS : 256;
  const parsed = parseGoInteger(text, 'Atoi');
  if (!parsed.ok) {
    attrs.fail('key-size', invalidValue(text, parsed.message));
    return undefined;
  }
  const bits = Number(parsed.value);
  if (algorithm === 'ECDSA') {
    if (!ECDSA_SIZES.includes(String(bits)))
      attrs.fail('key-size', unsupportedValue(text, ECDSA_SIZES));
  } else if (bits < RSA_MIN_BITS) {
    attrs.fail(
      'key-size',
      invalidValue(
        text,
        `key size must be at least ${RSA_MIN_BITS} when using the RSA key algorithm`,
      ),
    );
  } else if (bits > RSA_MAX_BITS) {
    attrs.fail(
      'key-size',
      invalidValue(
        text,
        `key size must not exceed ${RSA_MAX_BITS} when using the RSA key algorithm`,
      ),
    );
  }
  return bits;
}
