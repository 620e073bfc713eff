import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import t from 'tap';
import { CRCondition, isDenied } from '../../src/api/certificate-request.js';
import { findCondition } from '../../src/api/conditions.js';
import { type Issuer, IssuerKind } from '../../src/api/issuer.js';
import { ALLOW_IS_CA_ANNOTATION } from '../../src/api/labels.js';
import {
  caIssuerAttributes,
  POD_NAMESPACE,
  startCluster,
  startClusterController,
  startClusterPlugin,
} from '../support/cluster-harness.js';
import { until } from '../support/eventually.js';

// Kubernetes mode: the node may not read issuers (no RBAC), so the approver of
// `cert-csi controller` is what refuses a CA certificate for a volume; the publish reports its
// denial as PermissionDenied, naming is-ca and the annotation that would allow it.
t.test('a CA volume is denied by the approver until the Issuer opts in', async (t) => {
  const cluster = await startCluster(t);
  await cluster.seedIssuer();
  const controller = startClusterController(t, cluster);
  const node = await startClusterPlugin(t, cluster, { attemptTimeoutMs: 20_000 });
  const attributes = { ...caIssuerAttributes, 'csi.cert-manager.io/is-ca': 'true' };

  const err = await node.publish('vol-ca', attributes).then(
    () => undefined,
    (e: unknown) => e as { code?: number; details?: string },
  );
  t.equal(err?.code, status.PERMISSION_DENIED, 'PermissionDenied');
  t.match(
    err?.details,
    /has been denied by the approval plugin: a CSI volume asked for a CA certificate \(is-ca: "true", spec\.isCA\): Issuer "sandbox\/ca" does not allow CA certificates for CSI volumes: set the annotation cert-csi\.io\/allow-is-ca: "true" on it/,
  );
  const [denied] = await cluster.requests();
  t.ok(denied && isDenied(denied), 'the request is Denied');
  t.equal(findCondition(denied?.status?.conditions, CRCondition.Denied)?.reason, 'IsCANotAllowed');
  t.equal(denied?.status?.certificate, undefined, 'nothing signed');

  const current = await cluster.server.store.get<Issuer>(IssuerKind, 'ca', POD_NAMESPACE);
  await cluster.server.store.update(IssuerKind, {
    ...current,
    metadata: { ...current.metadata, annotations: { [ALLOW_IS_CA_ANNOTATION]: 'true' } },
  });
  await until(
    () =>
      controller.informers()?.informer<Issuer>(IssuerKind).get('ca', POD_NAMESPACE)?.metadata
        .annotations?.[ALLOW_IS_CA_ANNOTATION],
    { what: "the approver's cache to see the annotation", timeoutMs: 20_000 },
  );
  // kubelet retries: the denied request is not resumed, a new one is asked for.
  const { target } = await node.publish('vol-ca', attributes);
  const certificate = new X509Certificate(await readFile(join(target, 'tls.crt')));
  t.ok(certificate.ca, 'the annotated Issuer signs CA:TRUE');
  const leaf = await node.publish('vol-leaf', caIssuerAttributes);
  t.notOk(
    new X509Certificate(await readFile(join(leaf.target, 'tls.crt'))).ca,
    'leaves stay leaves',
  );
});
