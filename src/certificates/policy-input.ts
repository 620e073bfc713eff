import type { Certificate } from '../api/certificate.js';
import type { CertificateCaches } from './certificate-caches.js';
import type { PolicyInput } from './policy-chains.js';
import { gatherRequests } from './request-gatherer.js';
import { requestMismatches } from './request-match.js';

/** What the trigger and readiness policies read for a Certificate, gathered from the caches. */
export async function policyInputOf(
  caches: CertificateCaches,
  certificate: Certificate,
  now: Date,
): Promise<PolicyInput & { nextRequestChanged: boolean }> {
  const { current, next } = gatherRequests(certificate, caches.ownedRequests(certificate));
  const currentCsr = current ? await caches.decodedCsr(current) : undefined;
  let nextRequestChanged = false;
  if (next) {
    const csr = await caches.decodedCsr(next);
    nextRequestChanged =
      csr instanceof Error || requestMismatches(next.spec, csr, certificate.spec).length > 0;
  }
  return {
    certificate,
    secret: caches.secretOf(certificate),
    currentRequest: current,
    currentCsr,
    now,
    nextRequestChanged,
  };
}
