import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import type { IssuedCertificate } from '../../src/volume-manager/issuance/certificate-files.js';
import { embeddedCA, startPlugin } from '../support/plugin-harness.js';

function spki(pem: string): string {
  return createPublicKey(createPrivateKey(pem))
    .export({ format: 'der', type: 'spki' })
    .toString('hex');
}

// 12 s certificates: renewal at two thirds of the lifetime is 8 s after issuance, above the 5 s
// floor (MIN_RENEWAL_WINDOW_MS), and two renewals take about 16 s of real timers. 30 s
// certificates took 40 s, longer than a test file may take.
const DURATION_S = 12;
/** Two renewals must come within two lifetimes. */
const DEADLINE_MS = 2 * DURATION_S * 1000;

t.test(
  `${DURATION_S} s certificates renew at least twice in ${2 * DURATION_S} s; reuse-private-key keeps the key; disable-auto-renew does not renew`,
  async (t) => {
    const issuances = new Map<string, IssuedCertificate[]>();
    const p = await startPlugin(t, {
      onIssued: (volumeId, issued) => {
        issuances.set(volumeId, [...(issuances.get(volumeId) ?? []), issued]);
      },
    });
    const short = {
      'csi.cert-manager.io/duration': `${DURATION_S}s`,
      'csi.cert-manager.io/key-algorithm': 'ECDSA',
    };
    const started = Date.now();
    const targets = {
      fresh: (await p.publish('csi-renew-fresh', embeddedCA(short))).target,
      reuse: (
        await p.publish(
          'csi-renew-reuse',
          embeddedCA({ ...short, 'csi.cert-manager.io/reuse-private-key': 'true' }),
        )
      ).target,
      once: (
        await p.publish(
          'csi-renew-once',
          embeddedCA({ ...short, 'csi.cert-manager.io/disable-auto-renew': 'true' }),
        )
      ).target,
    };
    // Renewal at two thirds of the lifetime: about 8 s and 16 s after issuance. Wait for the
    // second renewal of both renewing volumes, event-driven, with two lifetimes as the deadline.
    await new Promise<void>((resolve, reject) => {
      const deadline = setTimeout(
        () => reject(new Error(`fewer than two renewals in ${DEADLINE_MS / 1000} s`)),
        DEADLINE_MS - (Date.now() - started),
      );
      const check = setInterval(() => {
        if (
          (issuances.get('csi-renew-fresh')?.length ?? 0) >= 3 &&
          (issuances.get('csi-renew-reuse')?.length ?? 0) >= 3
        ) {
          clearTimeout(deadline);
          clearInterval(check);
          resolve();
        }
      }, 250);
    });
    t.ok(
      Date.now() - started < DEADLINE_MS,
      `two renewals within ${Math.round((Date.now() - started) / 1000)} s`,
    );

    const fresh = issuances.get('csi-renew-fresh') ?? [];
    const freshKeys = new Set(
      fresh.map((i) =>
        createPublicKey(i.key).export({ format: 'der', type: 'spki' }).toString('hex'),
      ),
    );
    t.equal(freshKeys.size, fresh.length, 'by default every renewal has a new key');
    const reuse = issuances.get('csi-renew-reuse') ?? [];
    const reuseKeys = new Set(
      reuse.map((i) =>
        createPublicKey(i.key).export({ format: 'der', type: 'spki' }).toString('hex'),
      ),
    );
    t.equal(reuseKeys.size, 1, 'reuse-private-key keeps one key');
    t.equal(
      issuances.get('csi-renew-once')?.length,
      1,
      'disable-auto-renew: issued once, never renewed',
    );

    for (const [label, target] of Object.entries(targets)) {
      const key = await readFile(join(target, 'tls.key'), 'utf8');
      const cert = new X509Certificate(await readFile(join(target, 'tls.crt')));
      t.ok(cert.checkPrivateKey(createPrivateKey(key)), `${label}: the files on disk match`);
    }
    const lastReuse = reuse.at(-1);
    t.equal(
      spki(await readFile(join(targets.reuse, 'tls.key'), 'utf8')),
      lastReuse
        ? createPublicKey(lastReuse.key).export({ format: 'der', type: 'spki' }).toString('hex')
        : '',
      'the reused key is the one on disk',
    );
    const perVolume = new Map<string, number>();
    for (const cr of await p.requests()) {
      const hash = cr.metadata.labels?.['csi.cert-manager.io/volume-id-hash'] ?? '';
      perVolume.set(hash, (perVolume.get(hash) ?? 0) + 1);
    }
    t.same([...perVolume.values()], [1, 1, 1], 'at most one CertificateRequest is kept per volume');
  },
);
