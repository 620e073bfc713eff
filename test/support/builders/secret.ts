import { encodeBytes } from '../../../src/api/certificate-request.js';
import { type Secret, SecretKind } from '../../../src/api/secret.js';
import { withNamespace } from './metadata.js';
import { build, buildFrom, type Modifier } from './modifier.js';

/** A core Secret named name, with no type and no data. */
export function secret(name: string, ...modifiers: Modifier<Secret>[]): Secret {
  return build({ apiVersion: 'v1', kind: SecretKind.kind, metadata: { name } }, modifiers);
}

/** A copy of base with modifiers applied. */
export function secretFrom(base: Secret, ...modifiers: Modifier<Secret>[]): Secret {
  return buildFrom(base, modifiers);
}

/** Sets the Secret's type. */
export function withType(type: string): Modifier<Secret> {
  return (object) => {
    object.type = type;
  };
}

/** Sets data to exactly the plain-text values given, base64-encoded as the API holds them. */
export function withData(values: Record<string, string>): Modifier<Secret> {
  const encoded: Record<string, string> = {};
  for (const [key, value] of Object.entries(values)) encoded[key] = encodeBytes(value);
  return withEncodedData(encoded);
}

/** Sets data to exactly the values given (already base64, or deliberately not). */
export function withEncodedData(values: Record<string, string>): Modifier<Secret> {
  return (object) => {
    object.data = { ...values };
  };
}

/** A kubernetes.io/tls Secret holding the PEM values given (the shape most tests need). */
export function tlsSecret(namespace: string, name: string, values: Record<string, string>): Secret {
  return secret(name, withNamespace(namespace), withType('kubernetes.io/tls'), withData(values));
}
