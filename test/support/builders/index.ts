// The object builders, for one import line per test: see modifier.ts for the style.
export { certificate, certificateFrom } from './certificate.js';
export {
  certificateRequest,
  certificateRequestFrom,
  type Requester,
  withCsr,
  withRequester,
} from './certificate-request.js';
export { clusterIssuer, issuer, issuerFrom } from './issuer.js';
export {
  withAnnotations,
  withCreationTimestamp,
  withGenerateName,
  withGeneration,
  withLabels,
  withNamespace,
  withResourceVersion,
  withUid,
} from './metadata.js';
export { build, buildFrom, type Modifier } from './modifier.js';
export { secret, secretFrom, tlsSecret, withData, withEncodedData, withType } from './secret.js';
export { withConditions, withIssuerRef, withSpec, withStatus } from './spec-status.js';
