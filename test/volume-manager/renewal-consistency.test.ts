import { createPrivateKey, X509Certificate } from 'node:crypto';
import t from 'tap';
import { readAtomically } from '../../src/fs/atomic-writer.js';
import { embeddedCA, startPlugin } from '../support/plugin-harness.js';
import { tempDir, tmpfsBase } from '../support/temp-dir.js';

t.test(
  'a reader checking key and certificate 10,000 times during 50 renewals sees no mismatch',
  async (t) => {
    // On tmpfs, like the real data root and like a pod's view of it.
    const p = await startPlugin(t, {
      dir: await tempDir(t, 'cert-csi-hammer-', await tmpfsBase()),
    });
    const { target } = await p.publish(
      'csi-hammer',
      embeddedCA({ 'csi.cert-manager.io/key-algorithm': 'ECDSA' }),
    );
    let renewals = 0;
    let done = false;
    const renewing = (async () => {
      for (let i = 0; i < 50; i++) {
        const outcome = await p.manager.renewNow({ volumeId: 'csi-hammer' });
        if (outcome.renewed.length === 1) renewals++;
      }
      done = true;
    })();
    let reads = 0;
    let mismatches = 0;
    const serials = new Set<string>();
    // Each distinct (key, certificate) pair is checked once: the same bytes give the same
    // answer, and 10,000 key checks made this test CPU-bound (101 s with both
    // cores busy). A torn read is a new pair, so it is still checked.
    const checked = new Map<string, { matches: boolean; serial: string }>();
    // Readers resolve ..data once and read both files from that generation (the documented
    // way; readAtomically retries when a generation vanishes under it).
    while (reads < 10_000 || !done) {
      const files = await readAtomically(target);
      const key = files?.get('tls.key');
      const cert = files?.get('tls.crt');
      if (!key || !cert) throw new Error('a file is missing');
      const pair = `${Buffer.from(key).toString('base64')}|${Buffer.from(cert).toString('base64')}`;
      let verdict = checked.get(pair);
      if (!verdict) {
        const certificate = new X509Certificate(Buffer.from(cert));
        verdict = {
          matches: certificate.checkPrivateKey(createPrivateKey(Buffer.from(key))),
          serial: certificate.serialNumber,
        };
        checked.set(pair, verdict);
      }
      if (!verdict.matches) mismatches++;
      serials.add(verdict.serial);
      reads++;
    }
    await renewing;
    t.equal(renewals, 50, '50 renewals happened');
    t.ok(reads >= 10_000, `${reads} reads`);
    t.equal(mismatches, 0, 'no key/certificate mismatch');
    t.ok(serials.size > 10, `the reader saw ${serials.size} different certificates`);
  },
);
