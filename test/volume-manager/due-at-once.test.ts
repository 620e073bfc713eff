import { createPrivateKey } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { status } from '@grpc/grpc-js';
import t from 'tap';
import {
  type CertificateRequest,
  CertificateRequestKind,
  decodeBytes,
  encodeBytes,
  isApproved,
} from '../../src/api/certificate-request.js';
import { setCondition } from '../../src/api/conditions.js';
import { signCertificate } from '../../src/pki/certificate.js';
import { parseCsr } from '../../src/pki/csr.js';
import { isStoreError } from '../../src/store/errors.js';
import type { BackoffPolicy } from '../../src/volume-manager/policy/renewal-policy.js';
import { rejection, until } from '../support/eventually.js';
import { makeCA } from '../support/issuer-fixtures.js';
import { embeddedCA, startPlugin } from '../support/plugin-harness.js';

t.test('durations a renewal cannot work with are refused before anything is written', async (t) => {
  const p = await startPlugin(t);
  const cases = [
    {
      attrs: { 'csi.cert-manager.io/duration': '1ns' },
      key: 'csi.cert-manager.io/duration',
      message:
        /csi\.cert-manager\.io\/duration: Invalid value: "1ns": duration must be at least 5s/,
    },
    {
      attrs: { 'csi.cert-manager.io/duration': '4.9s' },
      key: 'csi.cert-manager.io/duration',
      message: /"4\.9s": duration must be at least 5s/,
    },
    {
      attrs: { 'csi.cert-manager.io/duration': '1h', 'csi.cert-manager.io/renew-before': '59m58s' },
      key: 'csi.cert-manager.io/renew-before',
      message:
        /csi\.cert-manager\.io\/renew-before: Invalid value: "59m58s": renew-before must be at least 5s shorter than the duration \(1h0m0s\)/,
    },
  ];
  for (const [i, c] of cases.entries()) {
    const volumeId = `csi-too-short-${i}`;
    const err = (await rejection(p.publish(volumeId, embeddedCA(c.attrs)))) as {
      code?: number;
      details?: string;
    };
    t.equal(err.code, status.INVALID_ARGUMENT, `${c.key}: INVALID_ARGUMENT`);
    t.match(err.details, c.message, `${c.key}: names the key and the floor`);
    await t.rejects(stat(p.dataRoot.volumeDir(volumeId)), { code: 'ENOENT' }, 'no volume dir');
  }
  t.same(await p.requests(), [], 'no request was created');

  // The floor itself, and a renew-before at or above the duration (csi-driver falls back to
  // a third of the lifetime), are accepted.
  await p.publish('csi-floor', embeddedCA({ 'csi.cert-manager.io/duration': '5s' }));
  await p.publish(
    'csi-fallback',
    embeddedCA({ 'csi.cert-manager.io/duration': '1h', 'csi.cert-manager.io/renew-before': '2h' }),
  );
  t.equal((await p.requests()).length, 2);
});

t.test(
  'a certificate issued already due for renewal is retried after the backoff, never in a loop',
  async (t) => {
    const backoff: BackoffPolicy = { initialMs: 2_000, factor: 2, capMs: 60_000, jitter: 0 };
    const p = await startPlugin(t, { backoff });
    const ca = await makeCA();
    const signer = { certificatePem: ca.certificatePem, key: createPrivateKey(ca.keyPem) };
    const created: number[] = [];
    // An outside issuer (group example.com: no embedded signer answers) that caps every
    // certificate to 2 s, backdated so it is already expired when the plugin gets it.
    const watch = p.store.watch<CertificateRequest>(
      CertificateRequestKind,
      { resourceVersion: '1' },
      {
        onEvent: (event) => {
          if (event.type !== 'ADDED') return;
          created.push(Date.now());
          void sign(event.object);
        },
        onError: (err) => t.fail(String(err)),
      },
    );
    t.teardown(() => watch.stop());
    const sign = async (request: CertificateRequest) => {
      const csr = await parseCsr(decodeBytes(request.spec.request) ?? '');
      const pem = await signCertificate(
        csr,
        { durationMs: 2_000, isCA: false, usages: ['digital signature'] },
        signer,
        new Date(Date.now() - 10_000),
      );
      // The embedded approver writes the same request: retry on conflict, from the latest.
      for (;;) {
        const latest = await p.store.get<CertificateRequest>(
          CertificateRequestKind,
          request.metadata.name,
          request.metadata.namespace,
        );
        const now = new Date();
        // An Approved condition, once set (by the embedded approver), may not be rewritten.
        let conditions = isApproved(latest)
          ? (latest.status?.conditions ?? [])
          : setCondition(
              latest.status?.conditions,
              { type: 'Approved', status: 'True', reason: 'Test', message: 'approved' },
              now,
            );
        conditions = setCondition(
          conditions,
          { type: 'Ready', status: 'True', reason: 'Issued', message: 'issued' },
          now,
        );
        try {
          await p.store.updateStatus(CertificateRequestKind, {
            ...latest,
            status: {
              conditions,
              certificate: encodeBytes(pem),
              ca: encodeBytes(ca.certificatePem),
            },
          });
          return;
        } catch (err) {
          if (!isStoreError(err, 'Conflict')) throw err;
        }
      }
    };

    const started = Date.now();
    await p.publish('csi-capped', {
      'csi.cert-manager.io/issuer-name': 'capping',
      'csi.cert-manager.io/issuer-kind': 'CappingIssuer',
      'csi.cert-manager.io/issuer-group': 'example.com',
      'csi.cert-manager.io/key-algorithm': 'ECDSA',
    });
    const metadata = JSON.parse(await readFile(p.dataRoot.metadataPath('csi-capped'), 'utf8'));
    t.equal(metadata.failures, 1, 'the issuance counts as a failure');
    t.match(metadata.lastError?.message, /due for renewal at once/);
    t.ok(
      Date.parse(metadata.nextRetryTime) >= started + backoff.initialMs,
      'retry after the backoff',
    );

    // The retry comes (a renewal, not a stop), then the next one waits twice as long.
    await until(() => created.length >= 2, { what: 'the retry after backoff', timeoutMs: 30_000 });
    const windowMs = 10_000;
    await new Promise((resolve) => setTimeout(resolve, windowMs - (Date.now() - started)));
    // Issuances the backoff allows in the window: the publish, then after 2 s and 4 s more.
    const allowed = 3;
    const inWindow = created.filter((at) => at - started <= windowMs).length;
    t.ok(inWindow <= allowed, `${inWindow} requests in ${windowMs} ms, at most ${allowed}`);
    const after = JSON.parse(await readFile(p.dataRoot.metadataPath('csi-capped'), 'utf8'));
    t.ok(after.failures >= 2, 'the failures keep counting, so the backoff grows');
  },
);
