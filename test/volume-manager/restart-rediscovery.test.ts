import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import type { CertificateRequest } from '../../src/api/certificate-request.js';
import { hashIdentifier, VOLUME_ID_HASH_LABEL } from '../../src/api/labels.js';
import { readVolumeStatuses } from '../../src/volume-manager/control/volume-status.js';
import { embeddedCA, startPlugin } from '../support/plugin-harness.js';
import { tempDir, tmpfsBase } from '../support/temp-dir.js';

const VOLUMES = 500;
const OVERDUE = 50;

t.test(
  'restart with 500 volumes: valid ones wait, overdue ones renew, corrupt and stray dirs do not stop start-up',
  async (t) => {
    const dir = await tempDir(t, 'cert-csi-restart-', await tmpfsBase());
    const stateDir = join(dir, 'state');
    const first = await startPlugin(t, { dir, stateDir, maxConcurrentIssuances: 8 });
    const ids = Array.from(
      { length: VOLUMES },
      (_, i) => `csi-restart-${String(i).padStart(3, '0')}`,
    );
    const attributes = embeddedCA({ 'csi.cert-manager.io/key-algorithm': 'ECDSA' });
    for (let i = 0; i < ids.length; i += 25) {
      await Promise.all(ids.slice(i, i + 25).map((id) => first.publish(id, attributes)));
    }
    const before = requestsByVolume(await first.requests());
    t.equal(before.size, VOLUMES, 'one request per volume');
    await first.stop();

    // While the plugin is down: some volumes fall due, one metadata.json breaks, and two
    // directories that are not volumes appear.
    const overdue = ids.slice(0, OVERDUE);
    for (const id of overdue) {
      const path = first.dataRoot.metadataPath(id);
      const metadata = JSON.parse(await readFile(path, 'utf8'));
      metadata.nextIssuanceTime = new Date(Date.now() - 3600_000).toISOString();
      await writeFile(path, JSON.stringify(metadata));
    }
    const corrupt = ids[VOLUMES - 1] ?? '';
    await writeFile(first.dataRoot.metadataPath(corrupt), '{"volumeId": "truncated');
    await mkdir(join(first.dataRoot.root, 'stray-dir'));
    await writeFile(join(first.dataRoot.root, 'stray-dir', 'notes.txt'), 'keep me');
    await mkdir(join(first.dataRoot.root, '..not-a-volume'));

    const renewed: string[] = [];
    let allRenewed = () => {};
    const started = performance.now();
    const second = await startPlugin(t, {
      dir,
      stateDir,
      maxConcurrentIssuances: 8,
      onIssued: (volumeId) => {
        renewed.push(volumeId);
        if (renewed.length === OVERDUE) allRenewed();
      },
    });
    const startMs = performance.now() - started;
    // Reported, not asserted: a speed target belongs in bench/renewal.ts (2,000 volumes, < 2 s
    // on a quiet machine), not in a test that must pass on a busy one.
    t.comment(`start-up took ${Math.round(startMs)} ms`);
    await new Promise<void>((resolve) => {
      allRenewed = resolve;
      if (renewed.length >= OVERDUE) resolve();
    });
    t.same([...renewed].sort(), [...overdue].sort(), 'exactly the overdue volumes were renewed');
    t.equal(
      second.manager.scheduledRenewals,
      VOLUMES - 1,
      'every volume but the corrupt one has a timer',
    );
    const after = requestsByVolume(await second.requests());
    t.equal(after.size, VOLUMES, 'still one request per volume');
    const changed = [...after.entries()].filter(([hash, name]) => before.get(hash) !== name);
    t.equal(changed.length, OVERDUE, 'new requests only for the overdue volumes');
    const overdueHashes = new Set(overdue.map((id) => hashIdentifier(id)));
    t.ok(
      changed.every(([hash]) => overdueHashes.has(hash)),
      'no valid volume was re-issued',
    );

    const statuses = await readVolumeStatuses(second.dataRoot);
    const broken = statuses.find((s) => s.volumeId === corrupt);
    t.equal(broken?.state, 'corrupt', 'status reports the corrupt volume');
    t.equal(
      await readFile(join(second.dataRoot.root, 'stray-dir', 'notes.txt'), 'utf8'),
      'keep me',
      'stray dir left alone',
    );
    t.ok(
      (await stat(join(second.dataRoot.root, '..not-a-volume'))).isDirectory(),
      'other stray dir left alone',
    );
  },
);

/** volume-id-hash label to request name; fails on two requests for one volume. */
function requestsByVolume(requests: CertificateRequest[]): Map<string, string> {
  const map = new Map<string, string>();
  for (const request of requests) {
    const hash = request.metadata.labels?.[VOLUME_ID_HASH_LABEL] ?? '';
    if (map.has(hash)) throw new Error(`two requests for volume hash ${hash}`);
    map.set(hash, request.metadata.name);
  }
  return map;
}
