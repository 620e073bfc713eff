import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { ManualClock } from '../../src/base/clock.js';
import { DataRoot } from '../../src/volume/data-root.js';
import type { Mounter } from '../../src/volume/mounter.js';
import { rediscoverVolumes } from '../../src/volume-manager/operations/rediscovery.js';
import { RenewalScheduler } from '../../src/volume-manager/state/renewal-scheduler.js';
import { VolumeRegistry } from '../../src/volume-manager/state/volume-registry.js';
import { ODD_KINDS, oddFileMaker } from '../support/odd-files.js';
import { recordingLogger } from '../support/recording-logger.js';
import { tempDir } from '../support/temp-dir.js';
import { quietFollowers } from './parts-fixture.js';
import { makeVolume, podContext } from './renew-fixtures.js';

const HOUR_MS = 3600_000;

t.test('rediscovery takes back what it can and never fails on what it cannot', async (t) => {
  const dataRoot = new DataRoot(join(await tempDir(t), 'volumes'));
  await dataRoot.ensure();
  const clock = new ManualClock();
  const iso = (ms: number) => new Date(ms).toISOString();
  await makeVolume(dataRoot, 'csi-issued', { nextIssuanceTime: iso(clock.now() + HOUR_MS) });
  await makeVolume(dataRoot, 'csi-pending', {
    pendingRequest: { name: 'req', namespace: 'shop', createdAt: iso(clock.now()) },
  });
  await makeVolume(dataRoot, 'csi-unmirrored', { nextIssuanceTime: iso(clock.now() + HOUR_MS) });
  await makeVolume(dataRoot, 'csi-never');
  await makeVolume(dataRoot, 'csi-invalid', {
    nextIssuanceTime: iso(clock.now()),
    volumeContext: podContext({ 'csi.cert-manager.io/dns-name': 'typo.example' }),
  });
  await makeVolume(dataRoot, 'csi-corrupt');
  await writeFile(dataRoot.metadataPath('csi-corrupt'), '{"volumeId": "trunc');
  await mkdir(join(dataRoot.root, 'stray'));

  const refreshed: string[] = [];
  // Rediscovery only mirrors the files again: refresh is all of the Mounter it calls.
  const mounter = {
    refresh: async (dataDir: string) => {
      if (dataDir === dataRoot.dataDir('csi-unmirrored')) throw new Error('target gone');
      refreshed.push(dataDir);
    },
  } as unknown as Mounter;
  const registry = new VolumeRegistry();
  const renewed: Array<[string, string]> = [];
  const scheduler = new RenewalScheduler(clock, 0, (volumeId, reason) => {
    renewed.push([volumeId, reason]);
  });
  const logger = recordingLogger();

  const counts = await rediscoverVolumes({
    dataRoot,
    mounter,
    logger,
    clock,
    registry,
    scheduler,
    ...quietFollowers(t, { dataRoot, mounter, logger, registry, clock }),
  });

  t.same(counts, { managed: 3, corrupt: 1 });
  t.same(registry.volumeIds(), ['csi-issued', 'csi-pending', 'csi-unmirrored']);
  t.same(
    refreshed.sort(),
    [dataRoot.dataDir('csi-issued'), dataRoot.dataDir('csi-pending')],
    'the target paths are mirrored again',
  );
  t.ok(
    logger.records.some(
      ([level, obj, msg]) =>
        level === 'warn' &&
        (obj as { volumeId?: string }).volumeId === 'csi-unmirrored' &&
        /cannot refresh/.test(msg ?? ''),
    ),
    'a failed mirror is logged, the volume still managed',
  );
  t.ok(
    logger.records.some(
      ([level, obj]) =>
        level === 'error' &&
        (obj as { volumeId?: string; err?: string }).volumeId === 'csi-invalid' &&
        /dns-name/.test((obj as { err?: string }).err ?? ''),
    ),
    'invalid stored attributes are logged naming the key',
  );
  t.equal(scheduler.size, 3, 'one timer per managed volume');
  clock.advance(0);
  t.same(renewed, [['csi-pending', 'never issued']], 'the pending request is resumed at once');
  clock.advance(HOUR_MS);
  t.same(renewed.map(([id]) => id).sort(), ['csi-issued', 'csi-pending', 'csi-unmirrored']);

  const aside = (await readdir(dataRoot.volumeDir('csi-corrupt'))).filter((name) =>
    name.startsWith('metadata.json.corrupt-'),
  );
  t.equal(aside.length, 1, 'the corrupt metadata.json is moved aside');
  t.equal(
    await readFile(join(dataRoot.volumeDir('csi-corrupt'), aside[0] ?? ''), 'utf8'),
    '{"volumeId": "trunc',
  );
  t.same(await readdir(join(dataRoot.root, 'stray')), [], 'the stray dir is left alone');
  t.ok(await dataRoot.hasVolume('csi-never'), 'a never issued volume waits for kubelet');
});

t.test('an empty data root: nothing to take back', async (t) => {
  const dataRoot = new DataRoot(join(await tempDir(t), 'volumes'));
  await dataRoot.ensure();
  const clock = new ManualClock();
  const logger = recordingLogger();
  const registry = new VolumeRegistry();
  // Never called without volumes.
  const mounter = {} as Mounter;
  const counts = await rediscoverVolumes({
    dataRoot,
    mounter,
    logger,
    clock,
    registry,
    scheduler: new RenewalScheduler(clock, 0, () => {}),
    ...quietFollowers(t, { dataRoot, mounter, logger, registry, clock }),
  });
  t.same(counts, { managed: 0, corrupt: 0 });
});

t.test('odd entries as metadata.json are set aside at once, a dangling link too', async (t) => {
  const dataRoot = new DataRoot(join(await tempDir(t), 'volumes'));
  await dataRoot.ensure();
  const make = await oddFileMaker(t);
  for (const kind of ODD_KINDS) {
    await dataRoot.ensureVolume(`csi-${kind}`);
    await make(dataRoot.metadataPath(`csi-${kind}`), kind, '{}');
  }
  await dataRoot.ensureVolume('csi-dangling');
  await symlink(join(dataRoot.root, 'nowhere'), dataRoot.metadataPath('csi-dangling'));
  const clock = new ManualClock();
  const logger = recordingLogger();
  const registry = new VolumeRegistry();
  const mounter = {} as Mounter;
  const counts = await rediscoverVolumes({
    dataRoot,
    mounter,
    logger,
    clock,
    registry,
    scheduler: new RenewalScheduler(clock, 0, () => {}),
    ...quietFollowers(t, { dataRoot, mounter, logger, registry, clock }),
  });
  t.same(counts, { managed: 0, corrupt: ODD_KINDS.length + 1 });
  const setAside = logger.records.filter(
    ([, , msg]) => msg === 'unreadable metadata.json moved aside',
  );
  t.same(
    setAside.map(([level, obj]) => [level, (obj as { volumeId: string }).volumeId]).sort(),
    [...ODD_KINDS.map((kind) => `csi-${kind}`), 'csi-dangling'].sort().map((id) => ['error', id]),
  );
  for (const [, obj] of setAside) {
    t.match((obj as { err: string }).err, /is not a regular file but a /);
  }
  for (const kind of ODD_KINDS) {
    const names = await readdir(dataRoot.volumeDir(`csi-${kind}`));
    t.notOk(names.includes('metadata.json'), `${kind}: moved aside`);
  }
});
