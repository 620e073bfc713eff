import t from 'tap';
import { type Certificate, CertificateKind } from '../../src/api/certificate.js';
import {
  type CertificateRequest,
  CertificateRequestKind,
} from '../../src/api/certificate-request.js';
import { findCondition } from '../../src/api/conditions.js';
import {
  CERTIFICATE_WAIT_MS,
  certificateObject,
  createCaClusterIssuer,
  startCertificateStack,
  updateCertificate,
} from '../support/certificate-stack.js';
import { until } from '../support/eventually.js';
import { JumpClock } from '../support/jump-clock.js';
import { recordingLogger } from '../support/recording-logger.js';

const NS = 'apps';
const MINUTE = 60_000;
const DENIAL = {
  decision: 'deny' as const,
  reason: 'test.example/policy',
  message: 'this test denies every request',
};

t.test(
  'a Denied request fails the issuance and the next attempt waits for the backoff',
  async (t) => {
    const clock = new JumpClock();
    const logger = recordingLogger();
    const stack = await startCertificateStack(t, {
      clock,
      logger,
      config: { approval: () => DENIAL },
    });
    await createCaClusterIssuer(stack.store);
    await stack.store.create(
      CertificateKind,
      certificateObject(NS, 'denied', {
        dnsNames: ['d.example'],
        privateKey: { algorithm: 'ECDSA' },
      }),
    );
    const failedOnce = await stack.certificate(
      NS,
      'denied',
      (c) => c.status?.failedIssuanceAttempts === 1,
    );
    const issuing = findCondition(failedOnce.status?.conditions, 'Issuing');
    t.match(issuing, {
      status: 'False',
      reason: DENIAL.reason,
      message: `The certificate request has failed to complete and will be retried: ${DENIAL.message}`,
    });
    t.ok(failedOnce.status?.lastFailureTime, 'lastFailureTime is set');
    const firstRequest = await stack.store.get<CertificateRequest>(
      CertificateRequestKind,
      'denied-1',
      NS,
    );
    const backingOff = () =>
      logger.records.filter(([, , msg]) => msg?.startsWith('Backing off from issuance')).length;
    await until(() => backingOff() > 0, {
      what: 'the trigger to back off',
      timeoutMs: CERTIFICATE_WAIT_MS,
    });

    // 59 minutes later a change makes the trigger look again: it still backs off.
    clock.jump(59 * MINUTE);
    const before = backingOff();
    await updateCertificate(stack.store, NS, 'denied', (current) => ({
      ...current,
      metadata: { ...current.metadata, labels: { touched: 'yes' } },
    }));
    await until(() => backingOff() > before, {
      what: 'the trigger to back off again',
      timeoutMs: CERTIFICATE_WAIT_MS,
    });
    const held = await stack.store.get<Certificate>(CertificateKind, 'denied', NS);
    t.equal(held.status?.failedIssuanceAttempts, 1, 'no new attempt inside the backoff');
    t.equal(findCondition(held.status?.conditions, 'Issuing')?.status, 'False');

    // At one hour the scheduled re-check issues again: a new request for the same revision.
    clock.jump(MINUTE);
    const failedTwice = await stack.certificate(
      NS,
      'denied',
      (c) => c.status?.failedIssuanceAttempts === 2,
    );
    const secondRequest = await stack.store.get<CertificateRequest>(
      CertificateRequestKind,
      'denied-1',
      NS,
    );
    t.not(secondRequest.metadata.uid, firstRequest.metadata.uid, 'the denied request was replaced');
    t.ok(
      Date.parse(failedTwice.status?.lastFailureTime ?? '') >=
        Date.parse(failedOnce.status?.lastFailureTime ?? '') + 60 * MINUTE,
      'the second attempt came after the one-hour backoff',
    );
    t.equal(failedTwice.status?.revision, undefined, 'nothing was issued');
  },
);
