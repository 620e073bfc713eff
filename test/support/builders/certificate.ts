import { type Certificate, CertificateKind } from '../../../src/api/certificate.js';
import { build, buildFrom, type Modifier } from './modifier.js';

/** A cert-manager Certificate named name: no namespace, an empty secretName and issuerRef name. */
export function certificate(name: string, ...modifiers: Modifier<Certificate>[]): Certificate {
  return build(
    {
      apiVersion: 'cert-manager.io/v1',
      kind: CertificateKind.kind,
      metadata: { name },
      spec: { secretName: '', issuerRef: { name: '' } },
    },
    modifiers,
  );
}

/** A copy of base with modifiers applied. */
export function certificateFrom(
  base: Certificate,
  ...modifiers: Modifier<Certificate>[]
): Certificate {
  return buildFrom(base, modifiers);
}
