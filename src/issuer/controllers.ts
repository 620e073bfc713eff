import type { ControllerDefinition } from '../controller/controller-definition.js';
import { approver } from './certificaterequests/approver.js';
import { caRequestSigner, selfSignedRequestSigner } from './certificaterequests/request-signer.js';
import { caCsrSigner, selfSignedCsrSigner } from './certificatesigningrequests/csr-signer.js';
import { clusterIssuersController, issuersController } from './issuers-controller.js';
import { podCertificateSigner } from './podcertificaterequests/pod-certificate-signer.js';
import { trustBundlePublisher } from './podcertificaterequests/trust-bundle-publisher.js';
import type { IssuerStackConfig } from './stack-config.js';

/**
 * The issuer stack's controllers, under cert-manager's names where it has them (the pod
 * certificate signer and its trust bundles are ours); all on by default (cert-manager keeps
 * its CSR signers behind an alpha feature gate, off by default).
 */
export const issuerControllers: readonly ControllerDefinition<IssuerStackConfig>[] = [
  approver,
  caRequestSigner,
  selfSignedRequestSigner,
  issuersController,
  clusterIssuersController,
  caCsrSigner,
  selfSignedCsrSigner,
  podCertificateSigner,
  trustBundlePublisher,
];
