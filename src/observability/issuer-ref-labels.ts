import type { IssuerReference } from '../api/issuer-ref.js';
import { labelText } from './component-metrics.js';

/** What the Certificate and CertificateRequest families label a series with. */
export interface IssuerRefLabelled {
  metadata: { name: string; namespace?: string };
  spec: { issuerRef: IssuerReference };
}

// The informer replaces a cached object on every change: its label text is built once.
const labelsOfObject = new WeakMap<IssuerRefLabelled, string>();

/**
 * `name, namespace, issuer_name, issuer_kind, issuer_group` of a cached object as label text:
 * the raw spec.issuerRef values, as cert-manager's and csi-lib's collectors label them.
 */
export function issuerRefLabels(object: IssuerRefLabelled): string {
  let text = labelsOfObject.get(object);
  if (text === undefined) {
    const ref = object.spec.issuerRef;
    text = labelText({
      name: object.metadata.name,
      // A namespaced object in a cache always has its namespace.
      namespace: object.metadata.namespace as string,
      issuer_name: ref.name,
      issuer_kind: ref.kind ?? '',
      issuer_group: ref.group ?? '',
    });
    labelsOfObject.set(object, text);
  }
  return text;
}
