import { createPrivateKey, X509Certificate } from 'node:crypto';
import t from 'tap';
import { readAtomically } from '../../src/fs/atomic-writer.js';
import { embeddedCA, startPlugin } from '../support/plugin-harness.js';
import { tempDir, tmpfsBase } from '../support/temp-dir.js';

t.test(
  'a reader checking key, certificate and generation file 10,000 times during 50 renewals sees no mismatch',
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
    const checked = new Map<string, { matches: boolean; serial: string; generation: number }>();
    let lastGeneration = 0;
    // Each certificate seen has one counter: a certificate and its generation file are one set.
    const generationOf = new Map<string, number>();
    // Readers resolve ..data once and read both files from that generation (the documented
    // way; readAtomically retries when a generation vanishes under it).
    while (reads < 10_000 || !done) {
      const files = await readAtomically(target);
      const key = files?.get('tls.key');
      const cert = files?.get('tls.crt');
      if (!key || !cert) throw new Error('a file is missing');
      const generationFile = files?.get('generation.json');
      if (!generationFile) throw new Error('the generation file is missing');
      const pair = `${Buffer.from(key).toString('base64')}|${Buffer.from(cert).toString('base64')}|${generationFile.toString('base64')}`;
      let verdict = checked.get(pair);
      if (!verdict) {
        const certificate = new X509Certificate(Buffer.from(cert));
        const record = JSON.parse(generationFile.toString('utf8'));
        verdict = {
          matches:
            certificate.checkPrivateKey(createPrivateKey(Buffer.from(key))) &&
            record.serial === certificate.serialNumber.toUpperCase() &&
            Date.parse(record.notAfter) === Date.parse(certificate.validTo) &&
            Date.parse(record.notBefore) === Date.parse(certificate.validFrom),
          serial: certificate.serialNumber,
          generation: record.generation,
        };
        checked.set(pair, verdict);
      }
      if (!verdict.matches) mismatches++;
      // A reader never sees the counter go back.
      if (verdict.generation < lastGeneration) mismatches++;
      lastGeneration = verdict.generation;
      const seen = generationOf.get(verdict.serial);
      if (seen !== undefined && seen !== verdict.generation) mismatches++;
      generationOf.set(verdict.serial, verdict.generation);
      serials.add(verdict.serial);
      reads++;
    }
    await renewing;
    t.equal(renewals, 50, '50 renewals happened');
    t.ok(reads >= 10_000, `${reads} reads`);
    t.equal(mismatches, 0, 'no key/certificate/generation file mismatch, no counter going back');
    t.equal(
      new Set(generationOf.values()).size,
      serials.size,
      'each certificate seen had a counter of its own',
    );
    const last = JSON.parse(String((await readAtomically(target))?.get('generation.json')));
    t.match(
      last,
      { generation: 51, reason: 'renewed' },
      'the first issuance was generation 1; each of the 50 renewals added one',
    );
    t.ok(serials.size > 10, `the reader saw ${serials.size} different certificates`);
  },
);
