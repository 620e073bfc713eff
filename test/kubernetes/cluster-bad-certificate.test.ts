import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import t from 'tap';
import {
  type CertificateRequest,
  CertificateRequestKind,
  encodeBytes,
} from '../../src/api/certificate-request.js';
import { setCondition } from '../../src/api/conditions.js';
import { type KubeEvent, KubeEventKind } from '../../src/api/kube-event.js';
import {
  caIssuerAttributes,
  POD_NAMESPACE,
  startCluster,
  startClusterPlugin,
} from '../support/cluster-harness.js';
import { makeCA } from '../support/issuer-fixtures.js';

// An issuer that answers with garbage, or with someone else's certificate, must not get
// it written into a pod: the publish fails, says why, and the pod gets an Event.
t.test('an issued certificate that is unreadable or not for our key is refused', async (t) => {
  const cluster = await startCluster(t);
  const node = await startClusterPlugin(t, cluster, { attemptTimeoutMs: 10_000 });
  const other = await makeCA();
  const answers: Array<[string, string, RegExp]> = [
    ['vol-garbage', 'not a certificate', /returned an unreadable certificate/],
    [
      'vol-foreign',
      other.certificatePem,
      /returned a certificate that does not match the private key/,
    ],
  ];
  for (const [volumeId, certificate, expected] of answers) {
    const publishing = node.publish(volumeId, caIssuerAttributes).then(
      () => 'published',
      (err: unknown) => (err instanceof Error ? err.message : String(err)),
    );
    // Play the issuer by hand: approve and "issue" whatever this case returns.
    let request: CertificateRequest | undefined;
    for (let i = 0; i < 500 && !request; i++) {
      request = (await cluster.requests()).find((r) => r.metadata.labels && !r.status?.certificate);
      if (!request) await delay(10);
    }
    t.ok(request, `${volumeId}: the plugin asked`);
    if (!request) return;
    const now = new Date();
    const approved = setCondition(
      request.status?.conditions,
      { type: 'Approved', status: 'True', reason: 'test', message: 'ok' },
      now,
    );
    await cluster.server.store.updateStatus(CertificateRequestKind, {
      ...request,
      status: {
        certificate: encodeBytes(certificate),
        ca: encodeBytes(other.certificatePem),
        conditions: setCondition(
          approved,
          { type: 'Ready', status: 'True', reason: 'Issued', message: 'issued' },
          now,
        ),
      },
    });
    t.match(await publishing, expected, `${volumeId}: refused with the reason`);
    const target = join(node.dir, 'pods', volumeId, 'mount');
    const files: string[] = await readdir(target).catch(() => []);
    t.notOk(files.includes('tls.crt'), `${volumeId}: nothing written for the pod`);
    await cluster.server.store.delete(CertificateRequestKind, request.metadata.name, POD_NAMESPACE);
  }
  await node.plugin.events.flush();
  const events = await cluster.server.store.list<KubeEvent>(KubeEventKind, {
    namespace: POD_NAMESPACE,
  });
  t.equal(
    events.items.filter((e) => e.reason === 'InvalidCertificate' && e.type === 'Warning').length,
    2,
    'each refusal is an InvalidCertificate Warning on the pod',
  );
});
