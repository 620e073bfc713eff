import { type KeyObject, X509Certificate } from 'node:crypto';
import type { Test } from 'tap';
import {
  type ClusterTrustBundle,
  ClusterTrustBundleKind,
} from '../../src/api/cluster-trust-bundle.js';
import {
  type PodCertificateRequest,
  PodCertificateRequestKind,
  terminalConditionOf,
} from '../../src/api/pod-certificate-request.js';
import { splitPemCertificates } from '../../src/pki/chain.js';
import { spkiOf } from '../../src/pki/keys.js';
import type { ResourceStore } from '../../src/store/resource-store.js';
import { opensslText, opensslVerify } from './issuer-fixtures.js';
import { waitForObject } from './wait-for-object.js';

/** Waits until the request has its terminal condition (Issued, Denied or Failed). */
export function answered(
  store: ResourceStore,
  namespace: string,
  name: string,
  timeoutMs?: number,
): Promise<PodCertificateRequest> {
  return waitForObject<PodCertificateRequest>(
    store,
    PodCertificateRequestKind,
    name,
    namespace,
    (request) => terminalConditionOf(request) !== undefined,
    timeoutMs,
  );
}

/** Waits until the signer's ClusterTrustBundle exists and holds (at least) predicate's content. */
export function trustBundle(
  store: ResourceStore,
  name: string,
  predicate: (bundle: ClusterTrustBundle) => boolean = () => true,
): Promise<ClusterTrustBundle> {
  return waitForObject<ClusterTrustBundle>(
    store,
    ClusterTrustBundleKind,
    name,
    undefined,
    predicate,
  );
}

/**
 * Checks an Issued request the way kubelet and the API server see it: one Issued condition,
 * the three times equal to the leaf's and in the API's bounds, the leaf for the requested key
 * with the SPIFFE ID as its only (critical) SAN and an empty subject, and the chain verifying
 * with `openssl verify` against the trust bundle alone.
 */
export async function checkIssued(
  t: Test,
  request: PodCertificateRequest,
  expected: { publicKey: KeyObject; spiffeId: string; trustBundlePem: string },
): Promise<X509Certificate> {
  const condition = terminalConditionOf(request);
  t.match(condition, { type: 'Issued', status: 'True', reason: 'Issued' }, 'Issued');
  t.equal(request.status?.conditions?.length, 1, 'one condition');
  const chainPem = request.status?.certificateChain ?? '';
  const [leaf] = splitPemCertificates(chainPem);
  if (!leaf) throw new Error('no leaf in the chain');
  t.ok(spkiOf(leaf.publicKey).equals(spkiOf(expected.publicKey)), 'leaf has the requested key');
  t.equal(leaf.subjectAltName, `URI:${expected.spiffeId}`, 'only the SPIFFE ID');
  t.equal(leaf.subject ?? '', '', 'empty subject');
  t.equal(leaf.ca, false, 'not a CA');
  const notBefore = new Date(leaf.validFrom);
  const notAfter = new Date(leaf.validTo);
  t.equal(request.status?.notBefore, notBefore.toISOString().replace('.000Z', 'Z'), 'notBefore');
  t.equal(request.status?.notAfter, notAfter.toISOString().replace('.000Z', 'Z'), 'notAfter');
  const refresh = Date.parse(request.status?.beginRefreshAt ?? '');
  t.ok(
    refresh >= notBefore.getTime() + 600_000 && refresh <= notAfter.getTime() - 600_000,
    'beginRefreshAt inside [notBefore + 10m, notAfter - 10m]',
  );
  const lifetime = (notAfter.getTime() - notBefore.getTime()) / 1000;
  t.ok(
    lifetime >= 3600 && lifetime <= (request.spec.maxExpirationSeconds ?? 86_400),
    'lifetime within [1h, maxExpirationSeconds]',
  );
  t.match(await opensslVerify(expected.trustBundlePem, chainPem), /: OK/, 'chain verifies');
  const text = await opensslText(chainPem);
  t.match(text, /X509v3 Subject Alternative Name: critical/, 'SAN critical');
  t.match(text, /TLS Web Server Authentication, TLS Web Client Authentication/, 'EKU');
  t.match(text, /X509v3 Key Usage: critical\s+Digital Signature/, 'key usage');
  return new X509Certificate(chainPem);
}
