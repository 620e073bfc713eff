// What the cluster fault tests share (cluster-faults.test.ts, cluster-watch-expiry.test.ts).
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Test } from 'tap';
import {
  type CertificateRequest,
  CertificateRequestKind,
} from '../../src/api/certificate-request.js';
import { VOLUME_ID_HASH_LABEL } from '../../src/api/labels.js';
import type { Controller } from '../../src/cli/controller/controller.js';
import type { MemoryStore } from '../../src/store/memory-store.js';
import { type Cluster, startCluster, startClusterController } from '../support/cluster-harness.js';

export const NODE_USER = 'system:serviceaccount:cert-csi:cert-csi-node';

/** For every volume-id-hash label: the live (not deleted) requests now, and the most ever. */
export interface LiveRequests {
  live: Map<string, Set<string>>;
  max: Map<string, number>;
  errors: Error[];
}

/**
 * Follows every CertificateRequest from the fake server's own store (admin side, not over
 * HTTP, so no injected fault hides a change) and records how many were live per volume.
 */
export async function trackLiveRequests(t: Test, store: MemoryStore): Promise<LiveRequests> {
  const tracked: LiveRequests = { live: new Map(), max: new Map(), errors: [] };
  const apply = (type: string, request: CertificateRequest) => {
    const hash = request.metadata.labels?.[VOLUME_ID_HASH_LABEL];
    if (hash === undefined) return;
    const names = tracked.live.get(hash) ?? new Set<string>();
    tracked.live.set(hash, names);
    if (type === 'DELETED') names.delete(request.metadata.name);
    else names.add(request.metadata.name);
    tracked.max.set(hash, Math.max(tracked.max.get(hash) ?? 0, names.size));
  };
  const listed = await store.list<CertificateRequest>(CertificateRequestKind);
  for (const request of listed.items) apply('ADDED', request);
  const watch = store.watch<CertificateRequest>(
    CertificateRequestKind,
    { resourceVersion: listed.resourceVersion },
    {
      onEvent: (event) => apply(event.type, event.object),
      onError: (err) => tracked.errors.push(err),
    },
  );
  t.teardown(() => watch.stop());
  return tracked;
}

/** A cluster with the CA Issuer ready and `cert-csi controller` running in-process. */
export async function clusterWithController(
  t: Test,
): Promise<{ cluster: Cluster; startSigner: () => Promise<Controller> }> {
  const cluster = await startCluster(t);
  await cluster.seedIssuer();
  const startSigner = async () => {
    const controller = startClusterController(t, cluster);
    return controller;
  };
  return { cluster, startSigner };
}

/** Checks the volume's files: the certificate verifies against ca.crt and matches the key. */
export async function checkFiles(
  t: Test,
  target: string,
  volumeId: string,
): Promise<X509Certificate> {
  const cert = new X509Certificate(await readFile(join(target, 'tls.crt')));
  const ca = new X509Certificate(await readFile(join(target, 'ca.crt')));
  t.ok(cert.verify(ca.publicKey), `${volumeId}: tls.crt is signed by ca.crt`);
  t.ok(
    cert.checkPrivateKey(createPrivateKey(await readFile(join(target, 'tls.key')))),
    `${volumeId}: tls.key matches tls.crt`,
  );
  return cert;
}
