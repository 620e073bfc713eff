import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import t from 'tap';
import { embeddedCA, startPlugin } from '../support/plugin-harness.js';

// 50 rounds of publishes racing unpublishes, on its own: in publish-behaviour.test.ts it made
// that file take over 20 s.
t.test(
  'publishes racing unpublishes answer OK or Aborted, never Internal, and leave nothing behind',
  async (t) => {
    // Unpublish fired from onIssued lands while the publish mounts (its step after issuance).
    const unpublishOnIssue = new Map<string, () => void>();
    const p = await startPlugin(t, {
      onIssued: (volumeId) => unpublishOnIssue.get(volumeId)?.(),
    });
    const attributes = embeddedCA({ 'csi.cert-manager.io/key-algorithm': 'ECDSA' });
    const outcome = (call: Promise<unknown>) =>
      call.then(
        () => 'OK',
        (e: { code?: number; details?: string }) =>
          `${status[e.code ?? status.UNKNOWN]}${e.code === status.ABORTED ? '' : `: ${e.details}`}`,
      );
    const seen = new Set<string>();
    const unexpected: string[] = [];
    const record = (step: string, result: string) => {
      seen.add(result);
      if (result !== 'OK' && result !== 'ABORTED') unexpected.push(`${step}: ${result}`);
    };
    for (let i = 0; i < 50; i++) {
      const volumeId = `csi-race-${i}`;
      const target = join(p.dir, 'pods', volumeId, 'mount');
      // 1. Unpublish during issuance, at a few different moments.
      const issuing = outcome(p.publish(volumeId, attributes));
      await new Promise((resolve) => setTimeout(resolve, i % 5));
      record('unpublish during issuance', await outcome(p.unpublish(volumeId, target)));
      record('publish racing an unpublish during issuance', await issuing);
      await p.unpublish(volumeId, target);
      // 2. Unpublish during the mount step.
      let unpublishing: Promise<string> | undefined;
      unpublishOnIssue.set(volumeId, () => {
        unpublishing = outcome(p.unpublish(volumeId, target));
      });
      record(
        'publish racing an unpublish during mount',
        await outcome(p.publish(volumeId, attributes)),
      );
      unpublishOnIssue.delete(volumeId);
      record('unpublish during mount', (await unpublishing) ?? 'onIssued never fired');
      await p.unpublish(volumeId, target);
      // 3. A republish arriving while the volume is being unpublished.
      await p.publish(volumeId, attributes);
      // Two unpublishes at once: kubelet may retry one that seems slow.
      const leaving = outcome(
        Promise.all([p.unpublish(volumeId, target), p.unpublish(volumeId, target)]),
      );
      record('republish during an unpublish', await outcome(p.publish(volumeId, attributes)));
      record('unpublish racing a republish', await leaving);
      await p.unpublish(volumeId, target);
      await t.rejects(stat(target), { code: 'ENOENT' }, `${volumeId}: target gone`);
    }
    t.same(unexpected, [], `only OK and ABORTED (seen: ${[...seen].sort().join(', ')})`);
    t.same(await p.dataRoot.listVolumeIds(), [], 'no volume dir left');
    t.equal(p.manager.scheduledRenewals, 0, 'no renewal timer left');
    t.same(await p.requests(), [], 'no CertificateRequest left');
  },
);
