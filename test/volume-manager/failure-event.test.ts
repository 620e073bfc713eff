import t from 'tap';
import { IssuanceError } from '../../src/volume-manager/issuance/issuance-error.js';
import { issuanceFailureEvent } from '../../src/volume-manager/telemetry/failure-event.js';

const pod = {
  'csi.storage.k8s.io/pod.name': 'app-0',
  'csi.storage.k8s.io/pod.namespace': 'team',
  'csi.storage.k8s.io/pod.uid': 'u-1',
};

t.test('each issuance failure maps to a Warning on the pod naming the volume', async (t) => {
  const cases: Array<[IssuanceError['reason'], string]> = [
    ['denied', 'CertificateRequestDenied'],
    ['failed', 'CertificateRequestFailed'],
    ['timeout', 'CertificateRequestPending'],
    ['aborted', 'IssuanceAborted'],
    ['invalid-certificate', 'InvalidCertificate'],
  ];
  for (const [reason, expected] of cases) {
    const event = issuanceFailureEvent(
      'vol-1',
      pod,
      new IssuanceError(`because ${reason}`, reason),
    );
    t.match(event, {
      pod: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'app-0', namespace: 'team', uid: 'u-1' },
      },
      type: 'Warning',
      reason: expected,
      message: `certificate for volume vol-1: because ${reason}`,
    });
  }
  t.match(issuanceFailureEvent('vol-1', pod, new Error('disk full')), { reason: 'IssuanceFailed' });
  t.match(issuanceFailureEvent('vol-1', pod, 'odd'), {
    message: 'certificate for volume vol-1: odd',
  });
});

t.test('no pod in the volume context, no event; no uid, an event without one', async (t) => {
  t.equal(issuanceFailureEvent('vol-1', {}, new Error('x')), undefined);
  t.equal(
    issuanceFailureEvent('vol-1', { 'csi.storage.k8s.io/pod.name': 'p' }, new Error('x')),
    undefined,
  );
  const event = issuanceFailureEvent(
    'vol-1',
    { 'csi.storage.k8s.io/pod.name': 'p', 'csi.storage.k8s.io/pod.namespace': 'n' },
    new Error('x'),
  );
  t.same(event?.pod.metadata, { name: 'p', namespace: 'n' });
});
