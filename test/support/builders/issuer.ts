import { ClusterIssuerKind, type Issuer, IssuerKind } from '../../../src/api/issuer.js';
import { build, buildFrom, type Modifier } from './modifier.js';

/** A cert-manager Issuer named name, with an empty spec (give it withNamespace). */
export function issuer(name: string, ...modifiers: Modifier<Issuer>[]): Issuer {
  return build(
    { apiVersion: 'cert-manager.io/v1', kind: IssuerKind.kind, metadata: { name }, spec: {} },
    modifiers,
  );
}

/** A cert-manager ClusterIssuer named name, with an empty spec. */
export function clusterIssuer(name: string, ...modifiers: Modifier<Issuer>[]): Issuer {
  return build(
    {
      apiVersion: 'cert-manager.io/v1',
      kind: ClusterIssuerKind.kind,
      metadata: { name },
      spec: {},
    },
    modifiers,
  );
}

/** A copy of base (an Issuer or a ClusterIssuer) with modifiers applied. */
export function issuerFrom(base: Issuer, ...modifiers: Modifier<Issuer>[]): Issuer {
  return buildFrom(base, modifiers);
}
