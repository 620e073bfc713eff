import t from 'tap';
import { CertificateRequestKind } from '../../src/api/certificate-request.js';
import { ClusterIssuerKind, IssuerKind } from '../../src/api/issuer.js';
import type { Logger } from '../../src/api/logger.js';
import { SecretKind } from '../../src/api/secret.js';
import { StoreError } from '../../src/store/errors.js';
import {
  certificateRequest,
  clusterIssuer,
  issuer,
  tlsSecret,
  withCsr,
  withIssuerRef,
  withNamespace,
  withSpec,
} from '../support/builders/index.js';
import { FaultyStore } from '../support/faulty-store.js';
import { keyAndCsr, makeCA } from '../support/issuer-fixtures.js';
import { startHarness } from '../support/issuer-stack-harness.js';

t.test('conflicts and server errors on status writes are retried until issued', async (t) => {
  let faulty: FaultyStore | undefined;
  const h = await startHarness(t, {
    wrap: (store) => {
      faulty = new FaultyStore(store);
      return faulty;
    },
  });
  const ca = await makeCA();
  await h.store.create(
    SecretKind,
    tlsSecret('ns', 'ca', { 'tls.crt': ca.certificatePem, 'tls.key': ca.keyPem }),
  );
  await h.store.create(
    IssuerKind,
    issuer('ca', withNamespace('ns'), withSpec({ ca: { secretName: 'ca' } })),
  );
  await h.issuerReason('ns', 'ca', 'KeyPairVerified');
  if (!faulty) throw new Error('the harness did not wrap the store');
  const writesBefore = faulty.statusUpdates;
  faulty.statusErrors.push(
    new StoreError('Conflict', 'the object has been modified'),
    new StoreError('InternalError', 'etcd is having a bad day'),
    new StoreError('Conflict', 'the object has been modified'),
  );
  const { csrPem } = await keyAndCsr({ algorithm: 'ECDSA', size: 256 });
  await h.store.create(
    CertificateRequestKind,
    certificateRequest(
      'retried',
      withNamespace('ns'),
      withIssuerRef({ name: 'ca' }),
      withCsr(csrPem),
    ),
  );
  const issued = await h.readyReason('ns', 'retried', 'Issued');
  t.ok(issued.status?.certificate);
  t.equal(faulty.statusErrors.length, 0, 'every injected fault was hit');
  t.ok(
    faulty.statusUpdates - writesBefore >= 5,
    'approval and issuance were written after the faults',
  );
});

t.test('requests deleted while the controllers work on them cause no retries', async (t) => {
  const warnings: string[] = [];
  const logger: Logger = {
    debug: () => {},
    info: () => {},
    warn: (obj, msg) => warnings.push(`${msg}: ${JSON.stringify(obj)}`),
    error: (obj, msg) => warnings.push(`${msg}: ${JSON.stringify(obj)}`),
    child: () => logger,
  };
  const h = await startHarness(t, { logger });
  await h.store.create(ClusterIssuerKind, clusterIssuer('self', withSpec({ selfSigned: {} })));
  const { csrPem } = await keyAndCsr({ algorithm: 'Ed25519' });
  const ref = { issuerRef: { name: 'self', kind: 'ClusterIssuer' } };
  for (let i = 0; i < 20; i++) {
    await h.store.create(
      CertificateRequestKind,
      certificateRequest(`short-${i}`, withNamespace('ns'), withSpec(ref), withCsr(csrPem)),
    );
    await h.store.delete(CertificateRequestKind, `short-${i}`, 'ns');
  }
  await h.store.create(
    CertificateRequestKind,
    certificateRequest('sentinel', withNamespace('ns'), withSpec(ref), withCsr(csrPem)),
  );
  // SelfSigned without a key annotation fails finally: proof the queue got this far.
  await h.readyReason('ns', 'sentinel', 'Failed');
  t.same(
    warnings.filter((w) => w.startsWith('sync failed')),
    [],
    'no sync failed on a deleted request',
  );
  const left = await h.store.list(CertificateRequestKind, { namespace: 'ns' });
  t.same(
    left.items.map((cr) => cr.metadata.name),
    ['sentinel'],
    'nothing recreated a deleted request',
  );
});
