import {
  csrApprovalWrite,
  csrCertificateChanged,
  csrStatusWrite,
  csrUpdate,
  validateCsrCreate,
  withCsrRequester,
} from '../../src/admission/certificate-signing-request-rules.js';
import {
  csrApproveDeniedDetail,
  csrSignDeniedDetail,
} from '../../src/admission/signer-authorization.js';
import {
  type CertificateSigningRequest,
  CertificateSigningRequestKind,
} from '../../src/api/certificate-signing-request.js';
import type { KindStrategy } from './kinds.js';
import { admissionForbidden, invalidFields } from './status.js';

// kube-apiserver's CertificateSigningRequest registry (strategy, status and approval
// strategies) and its CertificateSigning and CertificateApproval admission plugins, over the
// pure rules of src/admission.

function refuse(csr: CertificateSigningRequest, errors: readonly string[]): void {
  if (errors.length > 0) {
    throw invalidFields(CertificateSigningRequestKind, csr.metadata.name ?? '', errors);
  }
}

/**
 * CSRs: create records the requester's identity and wipes the status before validating (the
 * request must be a PEM CSR whose signature verifies); an update keeps the stored spec and
 * status; a status write may set the certificate once and needs `sign` on the signer to
 * change it (403 otherwise); an approval write changes only the conditions and always needs
 * `approve` on the signer (403 otherwise). Approved and Denied never stand together.
 */
export const certificateSigningRequestStrategy: KindStrategy = {
  async create(object, context) {
    const csr = withCsrRequester(object as CertificateSigningRequest, context.requester);
    refuse(csr, validateCsrCreate(csr));
    return csr;
  },
  update(object, stored) {
    return csrUpdate(object as CertificateSigningRequest, stored as CertificateSigningRequest);
  },
  updateStatus(object, stored, context) {
    const old = stored as CertificateSigningRequest;
    const { object: next, errors } = csrStatusWrite(
      object as CertificateSigningRequest,
      old,
      context.now,
    );
    refuse(next, errors);
    const signerName = old.spec.signerName;
    if (csrCertificateChanged(next, old) && !context.allowedOnSigner('sign', signerName)) {
      throw admissionForbidden(
        CertificateSigningRequestKind,
        old.metadata.name,
        csrSignDeniedDetail(signerName),
      );
    }
    return next;
  },
  updateApproval(object, stored, context) {
    const old = stored as CertificateSigningRequest;
    const { object: next, errors } = csrApprovalWrite(
      object as CertificateSigningRequest,
      old,
      context.now,
    );
    refuse(next, errors);
    // The plugin checks the stored signer name, on every approval write.
    const signerName = old.spec.signerName;
    if (!context.allowedOnSigner('approve', signerName)) {
      throw admissionForbidden(
        CertificateSigningRequestKind,
        old.metadata.name,
        csrApproveDeniedDetail(signerName),
      );
    }
    return next;
  },
};
