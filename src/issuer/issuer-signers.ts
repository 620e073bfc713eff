import type { IssuerType } from '../api/issuer.js';
import { createCASigner } from './ca-issuer.js';
import type { IssuerSigner } from './issuer-signer.js';
import { signSelfSigned } from './self-signed-issuer.js';

/** The signers of the issuer types this stack runs, by issuer type key. */
export type IssuerSigners = ReadonlyMap<IssuerType, IssuerSigner>;

/**
 * One signer per issuer type for the whole process, so every request API (and every
 * controller) shares the CA signer's cache of prepared CA keys.
 */
export function createIssuerSigners(): IssuerSigners {
  return new Map<IssuerType, IssuerSigner>([
    ['ca', createCASigner()],
    ['selfSigned', signSelfSigned],
  ]);
}

/** True when this stack signs for issuers of that type key. */
export function isOwnIssuerType(type: string | undefined): type is IssuerType {
  return type === 'ca' || type === 'selfSigned';
}
