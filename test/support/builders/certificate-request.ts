import {
  type CertificateRequest,
  CertificateRequestKind,
  type CertificateRequestSpec,
  encodeBytes,
} from '../../../src/api/certificate-request.js';
import { build, buildFrom, type Modifier } from './modifier.js';

/** A cert-manager CertificateRequest named name: no namespace, an empty request and issuerRef name. */
export function certificateRequest(
  name: string,
  ...modifiers: Modifier<CertificateRequest>[]
): CertificateRequest {
  return build(
    {
      apiVersion: 'cert-manager.io/v1',
      kind: CertificateRequestKind.kind,
      metadata: { name },
      spec: { request: '', issuerRef: { name: '' } },
    },
    modifiers,
  );
}

/** A copy of base with modifiers applied. */
export function certificateRequestFrom(
  base: CertificateRequest,
  ...modifiers: Modifier<CertificateRequest>[]
): CertificateRequest {
  return buildFrom(base, modifiers);
}

/** Sets spec.request to csrPem, base64-encoded as the API holds a []byte. */
export function withCsr(csrPem: string): Modifier<CertificateRequest> {
  return (request) => {
    request.spec.request = encodeBytes(csrPem);
  };
}

/** The identity fields cert-manager's webhook stamps on a request. */
export type Requester = Pick<CertificateRequestSpec, 'username' | 'uid' | 'groups' | 'extra'>;

/** Sets who created the request (spec.username, uid, groups, extra). */
export function withRequester(requester: Requester): Modifier<CertificateRequest> {
  return (request) => {
    request.spec = { ...request.spec, ...structuredClone(requester) };
  };
}
