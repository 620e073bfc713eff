import type { ErrorKind } from '../base/error-catalogue.js';

/** The one error type of the pki layer; its message names what is wrong and never holds key material. */
export class PkiError extends Error {
  override readonly name = 'PkiError';

  get errorKind(): ErrorKind {
    return 'CERT_CSI_PKI_FAILED';
  }
}
