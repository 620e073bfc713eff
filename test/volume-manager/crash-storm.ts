import { createPrivateKey, createPublicKey, randomUUID, X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import { lstat, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { errorMessage } from '../../src/base/error-message.js';
import { runStatus } from '../../src/cli/status/status-command.js';
import { CsiClient } from '../../src/driver/csi-client.js';
import { isAtomicTempFile } from '../../src/fs/atomic-file.js';
import { DATA_LINK, isGenerationName, readAtomically } from '../../src/fs/atomic-writer.js';
import { errnoCode } from '../../src/fs/errors.js';
import { DataRoot, REMOVING_PREFIX, VolumeFile } from '../../src/volume/data-root.js';
import { readMetadata, type VolumeMetadata } from '../../src/volume/metadata.js';
import { isValidVolumeId } from '../../src/volume/volume-id.js';
import { askRenew } from '../../src/volume-manager/control/control-client.js';
import type { RenewTarget } from '../../src/volume-manager/control/control-protocol.js';
import {
  readVolumeStatuses,
  type VolumeStatus,
} from '../../src/volume-manager/control/volume-status.js';
import { type NodeProcess, startNode } from '../support/cli-process.js';
import { runInProcess } from '../support/in-process-command.js';
import { NodeLog } from '../support/node-log.js';
import { type SeededRandom, seededRandom } from '../support/seeded-random.js';
import { tempDir, tmpfsBase } from '../support/temp-dir.js';

// The acceptance: "30 kill -9 trials at random moments of a publish-and-renew storm: after each
// restart every published volume has a matching key and certificate and a scheduled renewal;
// none lost", and "a renewal that completes after the volume was unpublished writes nothing and
// recreates no directory".
//
// Each trial starts `cert-csi node` (a child process: the real command, flags and wiring), checks
// what the previous kill left, runs a storm of publishes, republishes, unpublishes and manual
// renewals through the CSI socket, and sends SIGKILL at a random moment while requests are in
// flight. The 30 trials are shared by PARTS files, test/volume-manager/crash-safety-<part>.trial.ts, each
// a sequence of trials on its own data root: one sequence of 30 took over a minute and a half, and
// files that run side by side keep every file well under 30 s. Every choice of a part comes from
// one seed; set CERT_CSI_CRASH_SEED to replay a part's choices (the kill lands at the same delay,
// the process timing around it is the machine's), and CERT_CSI_CRASH_TRIALS to run fewer or more
// trials per part while debugging.

/** The trials all parts run together: the acceptance's 30. */
export const TOTAL_TRIALS = 30;
/** How many crash-safety-<part>.trial.ts files share them. */
export const PARTS = 5;
const TRIALS = Number(process.env.CERT_CSI_CRASH_TRIALS ?? TOTAL_TRIALS / PARTS);
const NEW_VOLUMES_PER_TRIAL = 3;
/** SIGKILL lands at a random delay in [KILL_MIN_MS, KILL_MAX_MS] after the storm begins. */
const KILL_MIN_MS = 50;
const KILL_MAX_MS = 1500;
/**
 * Storm operations start at random moments before the kill; this share of them in its last
 * LATE_WINDOW_MS, so that most kills find requests and renewals in flight.
 */
const LATE_SHARE = 0.35;
const LATE_WINDOW_MS = 80;
/** How long a due renewal may take after a restart before the volume counts as unscheduled. */
const RENEWAL_DEADLINE_MS = 10_000;
const SHORT_DURATION = '6s';
const FILES = ['ca.crt', 'generation.json', 'tls.crt', 'tls.key'];
const VOLUME_ENTRIES = new Set<string>([
  VolumeFile.metadata,
  VolumeFile.data,
  VolumeFile.pendingKey,
  VolumeFile.pkcs12Password,
]);

type Kind = 'short' | 'reuse' | 'long';

/** What the test knows about a volume from the answers of the RPCs it made. */
interface Volume {
  id: string;
  kind: Kind;
  target: string;
  context: Record<string, string>;
  /**
   * published: the last publish returned OK and no unpublish was sent since; gone: unpublish
   * returned OK; uncertain: the first publish or the unpublish was in flight at a kill (either
   * outcome is fine, and kubelet retries that RPC, so the next storm does).
   */
  state: 'published' | 'gone' | 'uncertain';
  retry?: 'publish' | 'unpublish';
  /** SubjectPublicKeyInfo of the key first seen, for reuse-private-key volumes. */
  spki?: string;
}

interface Counts {
  published: number;
  republished: number;
  unpublished: number;
  renewRequests: number;
  inFlightAtKill: number;
  /** Volumes a kill left uncertain (first publish or unpublish in flight), and how many kills did. */
  uncertainVolumes: Set<string>;
  killsLeavingUncertain: number;
  renewalsSeen: number;
  renewalsInFlightAtKill: number;
  renewalsCutByUnpublish: number;
  dueRenewalsAfterRestart: number;
  lateRenewals: number;
  /** Distinct paths, as the same leftover is seen by several checks. */
  leftoverTempFiles: Set<string>;
  staleGenerations: Set<string>;
  interruptedRemovals: Set<string>;
}

type PairCheck =
  | { state: 'none' }
  | { state: 'bad'; why: string }
  | { state: 'ok'; notAfter: number; spki: string; fingerprint: string };

/** Reads one generation of dir (the ..data scheme) and checks the key matches the certificate. */
async function checkPair(dir: string): Promise<PairCheck> {
  let files: Map<string, Buffer> | undefined;
  try {
    files = await readAtomically(dir);
  } catch (err) {
    return { state: 'bad', why: `unreadable: ${errorMessage(err)}` };
  }
  if (files === undefined) return { state: 'none' };
  const names = [...files.keys()].sort();
  const keyPem = files.get('tls.key');
  const certPem = files.get('tls.crt');
  if (names.join() !== FILES.join() || keyPem === undefined || certPem === undefined) {
    return { state: 'bad', why: `the generation holds [${names.join(', ')}]` };
  }
  try {
    const key = createPrivateKey(keyPem);
    const cert = new X509Certificate(certPem);
    if (!cert.checkPrivateKey(key)) return { state: 'bad', why: 'key does not match certificate' };
    // The generation file is written in the same generation: it names this certificate.
    const generation = JSON.parse(files.get('generation.json')?.toString() ?? '{}') as {
      serial?: string;
    };
    if (generation.serial !== cert.serialNumber.toUpperCase()) {
      return { state: 'bad', why: `generation.json names serial ${generation.serial}` };
    }
    return {
      state: 'ok',
      notAfter: Date.parse(cert.validTo),
      spki: spkiOf(keyPem),
      fingerprint: cert.fingerprint256,
    };
  } catch (err) {
    return { state: 'bad', why: `unparsable key or certificate: ${errorMessage(err)}` };
  }
}

function spkiOf(keyPem: Buffer): string {
  return createPublicKey(createPrivateKey(keyPem))
    .export({ format: 'der', type: 'spki' })
    .toString('hex');
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return false;
    throw err;
  }
}

/** metadata.json parsed and checked, undefined when absent, or why it cannot be read. */
async function metadataOf(
  dataRoot: DataRoot,
  id: string,
): Promise<VolumeMetadata | { unreadable: string } | undefined> {
  if (!(await exists(dataRoot.metadataPath(id)))) return undefined;
  try {
    return await readMetadata(dataRoot, id);
  } catch (err) {
    return { unreadable: errorMessage(err) };
  }
}

function isUnreadable(
  meta: VolumeMetadata | { unreadable: string } | undefined,
): meta is { unreadable: string } {
  return meta !== undefined && 'unreadable' in meta;
}

/** Stale generation dirs next to the current one (a crash before the old one was removed). */
async function staleGenerations(dir: string): Promise<string[]> {
  let current: string | undefined;
  try {
    current = await readlink(join(dir, DATA_LINK));
  } catch {
    current = undefined;
  }
  const names = await readdir(dir).catch(() => [] as string[]);
  return names.filter((n) => isGenerationName(n) && n !== current).map((n) => join(dir, n));
}

/**
 * Every volume dir on disk, whatever the test thinks of it: no metadata.json moved aside as
 * corrupt, every metadata.json parses, only the writer's own temp files besides the known
 * entries, and a data dir that holds one whole generation whose key matches its certificate
 * (and is at least as new as metadata.json says).
 */
async function inspectDataRoot(
  dataRoot: DataRoot,
  counts: Counts,
): Promise<{ problems: string[]; incomplete: Set<string> }> {
  const problems: string[] = [];
  const incomplete = new Set<string>();
  for (const id of await readdir(dataRoot.root)) {
    // An unpublish renames the volume dir out of the way before removing it.
    if (id.startsWith(REMOVING_PREFIX)) counts.interruptedRemovals.add(id);
    if (!isValidVolumeId(id)) continue;
    const dir = dataRoot.volumeDir(id);
    for (const entry of await readdir(dir)) {
      if (entry.startsWith(`${VolumeFile.metadata}.corrupt-`)) {
        problems.push(`${id}: an unreadable metadata.json was moved aside (${entry})`);
      } else if (isAtomicTempFile(entry)) {
        counts.leftoverTempFiles.add(join(dir, entry));
      } else if (!VOLUME_ENTRIES.has(entry)) {
        problems.push(`${id}: unexpected entry ${entry}`);
      }
    }
    const meta = await metadataOf(dataRoot, id);
    if (meta === undefined) incomplete.add(id);
    else if (isUnreadable(meta)) problems.push(`${id}: half-written metadata: ${meta.unreadable}`);
    const pair = await checkPair(dataRoot.dataDir(id));
    if (pair.state === 'bad') problems.push(`${id}: data dir: ${pair.why}`);
    if (meta !== undefined && !isUnreadable(meta) && meta.notAfter !== undefined) {
      if (pair.state !== 'ok') {
        problems.push(`${id}: metadata.json has notAfter but the data dir has no certificate`);
      } else if (pair.notAfter < Date.parse(meta.notAfter)) {
        problems.push(`${id}: metadata.json claims a newer certificate than the one on disk`);
      }
    }
    for (const path of await staleGenerations(dataRoot.dataDir(id))) {
      counts.staleGenerations.add(path);
    }
  }
  return { problems, incomplete };
}

/** The consistency checks of one moment (just after a kill, or after the restart). */
async function checkVolumes(
  dataRoot: DataRoot,
  volumes: readonly Volume[],
  counts: Counts,
): Promise<string[]> {
  const { problems, incomplete } = await inspectDataRoot(dataRoot, counts);
  const byId = new Map(volumes.map((v) => [v.id, v]));
  for (const id of incomplete) {
    if (byId.get(id)?.state !== 'uncertain') {
      problems.push(`${id}: volume dir without metadata.json, but the volume is not uncertain`);
    }
  }
  for (const vol of volumes) {
    if (vol.state === 'gone') {
      if (await exists(dataRoot.volumeDir(vol.id)))
        problems.push(`${vol.id}: unpublished, dir back`);
      if (await exists(vol.target)) problems.push(`${vol.id}: unpublished, target path back`);
      continue;
    }
    if (vol.state !== 'published') continue;
    const meta = await metadataOf(dataRoot, vol.id);
    if (meta === undefined) {
      problems.push(`${vol.id}: published volume lost (no metadata.json)`);
      continue;
    }
    if (isUnreadable(meta)) continue; // reported by inspectDataRoot
    if (!meta.nextIssuanceTime || !meta.notAfter) {
      problems.push(`${vol.id}: published volume without nextIssuanceTime or notAfter`);
    }
    const data = await checkPair(dataRoot.dataDir(vol.id));
    if (data.state !== 'ok') problems.push(`${vol.id}: published volume has no valid data pair`);
    const target = await checkPair(vol.target);
    if (target.state !== 'ok') {
      problems.push(
        `${vol.id}: target path: ${target.state === 'bad' ? target.why : 'no certificate files'}`,
      );
    }
    if (vol.kind === 'reuse' && data.state === 'ok') {
      vol.spki ??= data.spki;
      if (vol.spki !== data.spki)
        problems.push(`${vol.id}: reuse-private-key volume got a new key`);
    }
  }
  return problems;
}

function contextFor(id: string, kind: Kind): Record<string, string> {
  return {
    'csi.storage.k8s.io/ephemeral': 'true',
    'csi.storage.k8s.io/pod.name': `pod-${id}`,
    'csi.storage.k8s.io/pod.namespace': 'crash',
    'csi.storage.k8s.io/pod.uid': randomUUID(),
    'csi.storage.k8s.io/serviceAccount.name': 'app',
    'csi.cert-manager.io/issuer-name': 'embedded-ca',
    'csi.cert-manager.io/issuer-kind': 'ClusterIssuer',
    'csi.cert-manager.io/key-algorithm': 'ECDSA',
    'csi.cert-manager.io/dns-names': `${id}.crash.svc`,
    ...(kind === 'long' ? {} : { 'csi.cert-manager.io/duration': SHORT_DURATION }),
    ...(kind === 'reuse' ? { 'csi.cert-manager.io/reuse-private-key': 'true' } : {}),
  };
}

function publishRequest(vol: Volume): object {
  return {
    volume_id: vol.id,
    target_path: vol.target,
    readonly: true,
    volume_context: vol.context,
    volume_capability: {
      mount: { fs_type: '', mount_flags: [], volume_mount_group: '' },
      access_mode: { mode: 'SINGLE_NODE_WRITER' },
    },
  };
}

/** When the plugin should next renew the volume, from its metadata. */
function nextAttemptOf(meta: VolumeMetadata): number | undefined {
  const text =
    (meta.failures ?? 0) > 0 && meta.nextRetryTime ? meta.nextRetryTime : meta.nextIssuanceTime;
  return text === undefined ? undefined : Date.parse(text);
}

/**
 * Published volumes whose target path holds another certificate than their data dir. A renewal
 * in flight writes the data dir first and the target next: such a volume is looked at again
 * once the log says its renewal ended.
 */
async function staleMirrors(
  dataRoot: DataRoot,
  volumes: readonly Volume[],
  log: NodeLog,
): Promise<string[]> {
  const stale: string[] = [];
  for (const vol of volumes) {
    if (vol.state !== 'published') continue;
    for (let look = 1; ; look++) {
      const data = await checkPair(dataRoot.dataDir(vol.id));
      const target = await checkPair(vol.target);
      if (data.state !== 'ok' || target.state !== 'ok') break; // reported by checkVolumes
      if (data.fingerprint === target.fingerprint) break;
      const ended = await log.waitUntil(() => renewalsInFlight(log, vol.id) === 0, 5000);
      if (look < 3 && ended) continue;
      stale.push(
        `${vol.id}: target has the certificate valid to ${new Date(target.notAfter).toISOString()}, the data dir the one valid to ${new Date(data.notAfter).toISOString()}`,
      );
      break;
    }
  }
  return stale;
}

/** Warnings and errors in a plugin's log, but the one direct mode always logs at start. */
function notableLines(log: NodeLog): string[] {
  return log.lines
    .filter((l) => l.level === 'warn' || l.level === 'error' || l.level === 'fatal')
    .filter((l) => !l.msg?.startsWith('writing certificate files into target directories'))
    .map(
      (l) => `${l.level}: ${l.msg} ${JSON.stringify({ ...l, msg: undefined, time: undefined })}`,
    );
}

/**
 * Published volumes whose status is not ok or pending with a next renewal, and any corrupt
 * volume. Under load a 6 s certificate may expire while its renewal, due 2 s earlier, still
 * waits for an issuance slot: such a volume must then renew (a newer notAfter in the log)
 * before its status is read again; one that does not has no renewal scheduled.
 */
async function unscheduledVolumes(
  read: () => Promise<VolumeStatus[]>,
  volumes: readonly Volume[],
  log: NodeLog,
  counts: Counts,
): Promise<string[]> {
  const readAll = async () => new Map((await read()).map((s) => [s.volumeId, s] as const));
  let statuses = await readAll();
  const late = volumes
    .filter((v) => v.state === 'published')
    .map((v) => statuses.get(v.id))
    .filter((s): s is VolumeStatus => s?.state === 'expired');
  if (late.length > 0) {
    counts.lateRenewals += late.length;
    const renewedSince = (s: VolumeStatus) =>
      log
        .find('certificate renewed', s.volumeId)
        .some((l) => Date.parse(String(l.notAfter)) > Date.parse(s.notAfter ?? ''));
    await log.waitUntil(() => late.every(renewedSince), RENEWAL_DEADLINE_MS);
    statuses = await readAll();
  }
  const problems: string[] = [];
  for (const vol of volumes) {
    const s = statuses.get(vol.id);
    if (s?.state === 'corrupt') problems.push(`${vol.id}: corrupt (${s.detail})`);
    if (vol.state !== 'published') continue;
    if (s === undefined || (s.state !== 'ok' && s.state !== 'pending') || !s.nextRenewal) {
      problems.push(`${vol.id}: ${JSON.stringify(s)}`);
    }
  }
  return problems;
}

/** The distinct name patterns of leftover files (`.metadata.json.tmp-*`, ...). */
function namePatterns(paths: ReadonlySet<string>): string {
  const names = [...paths].map((p) => (p.split('/').pop() ?? p).replace(/-[0-9a-f]+$/, '-*'));
  return [...new Set(names)].join(', ') || 'none';
}

/** Renewals the log says began and did not end (renewed or failed): in flight at a kill. */
function renewalsInFlight(log: NodeLog, volumeId?: string): number {
  return renewalEnds(log, volumeId).inFlight;
}

/** Follows each volume's renewals through the log: those still open, and those an unpublish cut. */
function renewalEnds(
  log: NodeLog,
  volumeId?: string,
): { inFlight: number; cutByUnpublish: number } {
  const open = new Map<string, number>();
  let cutByUnpublish = 0;
  for (const line of log.lines) {
    const id = line.volumeId;
    if (id === undefined || (volumeId !== undefined && id !== volumeId)) continue;
    if (line.msg === 'renewing certificate') open.set(id, (open.get(id) ?? 0) + 1);
    else if (line.msg === 'certificate renewed' || line.msg?.startsWith('renewal failed')) {
      open.set(id, (open.get(id) ?? 0) - 1);
    } else if (line.msg === 'volume unpublished') {
      // A renewal cut short by an unpublish ends without a line of its own.
      if ((open.get(id) ?? 0) > 0) cutByUnpublish++;
      open.set(id, 0);
    }
  }
  return { inFlight: [...open.values()].filter((n) => n > 0).length, cutByUnpublish };
}

/**
 * Runs part `part` (1 to PARTS) of the crash-safety trials: TRIALS kills on one data root, then
 * the final round. Called by test/volume-manager/crash-safety-<part>.trial.ts.
 */
export function crashSafetyPart(part: number): void {
  t.setTimeout(300_000);
  t.test('the trials are shared by every part file', async (t) => {
    const names = (await readdir(import.meta.dirname)).filter((n) =>
      /^crash-safety-\d+\.trial\.[jt]s$/.test(n),
    );
    const parts = names.map((n) => Number(/-(\d+)\./.exec(n)?.[1])).sort((a, b) => a - b);
    t.same(
      parts,
      Array.from({ length: PARTS }, (_, i) => i + 1),
      `crash-safety-1 to -${PARTS} exist`,
    );
    t.ok(Number.isInteger(TOTAL_TRIALS / PARTS), `the ${TOTAL_TRIALS} trials split evenly`);
  });
  t.test(
    `kill -9 at random moments of a publish-and-renew storm loses nothing (part ${part} of ${PARTS})`,
    (t) => crashTrials(t, part),
  );
}

async function crashTrials(t: Test, part: number): Promise<void> {
  const baseSeed = Number(process.env.CERT_CSI_CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
  const replay = `seed=${baseSeed} (replay: CERT_CSI_CRASH_SEED=${baseSeed} with crash-safety-${part}.trial)`;
  t.comment(`crash-safety part ${part}: ${replay}, ${TRIALS} trials`);
  const rng: SeededRandom = seededRandom(baseSeed);
  const began = Date.now();

  const work = await tempDir(t, 'cert-csi-crash-', await tmpfsBase());
  const dataRoot = new DataRoot(join(work, 'volumes'));
  const socket = join(work, 'csi.sock');
  const nodeArgs = [
    '--endpoint',
    `unix://${socket}`,
    '--data-root',
    dataRoot.root,
    '--state-dir',
    join(work, 'state'),
    '--mount-mode',
    'direct',
    '--node-id',
    'crash-node',
    '--renewal-jitter',
    '0s',
    '--max-concurrent-issuances',
    '4',
    '--log-level',
    'info',
  ];

  let current: NodeProcess | undefined;
  t.teardown(() => {
    current?.child.kill('SIGKILL');
  });

  const volumes: Volume[] = [];
  const counts: Counts = {
    published: 0,
    republished: 0,
    unpublished: 0,
    renewRequests: 0,
    inFlightAtKill: 0,
    uncertainVolumes: new Set(),
    killsLeavingUncertain: 0,
    renewalsSeen: 0,
    renewalsInFlightAtKill: 0,
    renewalsCutByUnpublish: 0,
    dueRenewalsAfterRestart: 0,
    lateRenewals: 0,
    leftoverTempFiles: new Set(),
    staleGenerations: new Set(),
    interruptedRemovals: new Set(),
  };
  const startupMs: number[] = [];
  const errorLines: string[] = [];
  let nextId = 0;
  /** nextAttempt and notAfter of renewing volumes as the kill left them. */
  let atKill = new Map<string, { at: number; notAfter: number }>();

  for (let trial = 0; trial <= TRIALS; trial++) {
    const where = `trial ${trial}, ${replay}`;
    const startAt = Date.now();
    // No coverage is collected in the trials: skip tap's per-process hook (a faster start).
    const node = await startNode(nodeArgs, { untracked: true });
    current = node;
    const upAt = Date.now();
    startupMs.push(upAt - startAt);
    const log = new NodeLog(node);

    // 1. What the restart found: nothing lost, nothing half-written, nothing resurrected, and
    //    no removal a kill interrupted left over.
    t.same(
      await checkVolumes(dataRoot, volumes, counts),
      [],
      `after restart: consistent (${where})`,
    );
    t.same(
      (await readdir(dataRoot.root)).filter((n) => n.startsWith(REMOVING_PREFIX)),
      [],
      `after restart: interrupted removals finished (${where})`,
    );

    // 2. Scheduled renewals: every renewing volume that fell due while the plugin was down (or
    //    was renewing when it died) renews now, and its metadata moves forward.
    const due = [...atKill.entries()].filter(([, s]) => s.at <= upAt).map(([id]) => id);
    counts.dueRenewalsAfterRestart += due.length;
    const renewed = await log.waitUntil(
      () => due.every((id) => log.find('certificate renewed', id).length > 0),
      RENEWAL_DEADLINE_MS,
    );
    t.ok(
      renewed,
      `due volumes renewed after the restart: missing ${due.filter((id) => log.find('certificate renewed', id).length === 0).join(', ') || 'none'} (${where})`,
    );
    const notMoved: string[] = [];
    for (const id of due) {
      const meta = await metadataOf(dataRoot, id);
      const before = atKill.get(id)?.notAfter ?? 0;
      if (meta === undefined || isUnreadable(meta) || !meta.notAfter) notMoved.push(`${id}: none`);
      else if (Date.parse(meta.notAfter) <= before) notMoved.push(`${id}: ${meta.notAfter}`);
    }
    t.same(notMoved, [], `due volumes have a newer notAfter (${where})`);

    // 3. Every published volume is managed again: its status says when it renews next.
    t.same(
      await unscheduledVolumes(() => readVolumeStatuses(dataRoot), volumes, log, counts),
      [],
      `published volumes are ok or pending with a next renewal (${where})`,
    );

    // 4. After the renewals ran: still consistent, unpublished volumes still gone, and the
    //    target path (direct mode's mirror) serves the certificate of the data dir.
    t.same(
      await checkVolumes(dataRoot, volumes, counts),
      [],
      `after renewals: consistent (${where})`,
    );
    t.same(
      await staleMirrors(dataRoot, volumes, log),
      [],
      `target paths serve the data dir's certificate (${where})`,
    );

    if (trial === TRIALS) {
      await finalRound(t, {
        node,
        log,
        dataRoot,
        socket,
        stateDir: join(work, 'state'),
        volumes,
        counts,
        where,
      });
      counts.renewalsSeen += log.find('certificate renewed').length;
      errorLines.push(...notableLines(log));
      current = undefined;
      break;
    }

    // 5. The storm, and the kill.
    const client = new CsiClient({ kind: 'unix', path: socket });
    let killed = false;
    let inFlight = 0;
    const unexpected: string[] = [];
    const ops: Array<{ at: number; run: () => Promise<void> }> = [];
    const killAt = rng.int(KILL_MIN_MS, KILL_MAX_MS);
    const at = () =>
      rng.chance(LATE_SHARE)
        ? Math.max(0, killAt - rng.int(0, LATE_WINDOW_MS))
        : rng.int(0, killAt);

    const publish = async (vol: Volume): Promise<void> => {
      const republish = vol.state === 'published';
      if (!republish) {
        vol.state = 'uncertain';
        vol.retry = 'publish';
      }
      try {
        await client.nodeCall('NodePublishVolume', publishRequest(vol));
        vol.state = 'published';
        delete vol.retry;
        if (republish) counts.republished++;
        else counts.published++;
      } catch (err) {
        if (!killed) unexpected.push(`publish ${vol.id}: ${errorMessage(err)}`);
      }
    };
    const unpublish = async (vol: Volume): Promise<void> => {
      vol.state = 'uncertain';
      vol.retry = 'unpublish';
      try {
        await client.nodeCall('NodeUnpublishVolume', {
          volume_id: vol.id,
          target_path: vol.target,
        });
        vol.state = 'gone';
        delete vol.retry;
        counts.unpublished++;
        if (await exists(dataRoot.volumeDir(vol.id))) {
          unexpected.push(`unpublish ${vol.id}: returned OK but the dir is still there`);
        }
      } catch (err) {
        if (!killed) unexpected.push(`unpublish ${vol.id}: ${errorMessage(err)}`);
      }
    };
    // `cert-csi renew`'s request over the control socket; the kill may cut its answer short.
    const renewRequest = async (target: RenewTarget): Promise<void> => {
      counts.renewRequests++;
      await askRenew(dataRoot, target, { timeoutMs: RENEWAL_DEADLINE_MS }).catch(() => undefined);
    };
    const track =
      (run: () => Promise<void>): (() => Promise<void>) =>
      async () => {
        inFlight++;
        try {
          await run();
        } finally {
          inFlight--;
        }
      };

    // kubelet retries what was in flight at the last kill.
    for (const vol of volumes) {
      if (vol.state !== 'uncertain') continue;
      const retry = vol.retry === 'unpublish' ? unpublish : publish;
      ops.push({ at: at(), run: track(() => retry(vol)) });
    }
    // New volumes, some renewing within the trial, some reusing their key, some for 90 days.
    for (let i = 0; i < NEW_VOLUMES_PER_TRIAL; i++) {
      const kind = rng.pick<Kind>(['short', 'reuse', 'long']) ?? 'long';
      const id = `csi-crash-${String(nextId++).padStart(4, '0')}-${kind}`;
      const vol: Volume = {
        id,
        kind,
        target: join(work, 'pods', id, 'mount'),
        context: contextFor(id, kind),
        state: 'uncertain',
        retry: 'publish',
      };
      ops.push({
        at: at(),
        run: track(async () => {
          volumes.push(vol);
          await publish(vol);
        }),
      });
    }
    const settled = rng.shuffle(volumes.filter((v) => v.state === 'published'));
    for (const vol of settled.slice(0, 2)) ops.push({ at: at(), run: track(() => publish(vol)) });
    const leaving = settled.slice(2, 2 + (settled.length > 8 ? 2 : 1));
    for (const vol of leaving) {
      const when = at();
      // A renewal asked for just before the unpublish: it must write nothing once unpublished.
      if (rng.chance(0.6)) {
        ops.push({
          at: Math.max(0, when - rng.int(0, 20)),
          run: () => renewRequest({ volumeId: vol.id }),
        });
      }
      ops.push({ at: when, run: track(() => unpublish(vol)) });
    }
    const renewable = settled.slice(2 + leaving.length);
    const picked = rng.pick(renewable);
    const renewTarget: RenewTarget | undefined = rng.chance(0.25)
      ? { all: true }
      : picked && { volumeId: picked.id };
    if (renewTarget) ops.push({ at: at(), run: () => renewRequest(renewTarget) });

    const running: Promise<void>[] = [];
    const timers = ops.map((op) =>
      setTimeout(() => {
        if (!killed) running.push(op.run());
      }, op.at),
    );
    // The deliberate random moment of the kill.
    await sleep(killAt);
    const diedEarly = node.child.exitCode !== null || node.child.signalCode !== null;
    t.notOk(
      diedEarly,
      `the plugin was alive until the kill (${where})${diedEarly ? `\n${node.output()}` : ''}`,
    );
    killed = true;
    for (const timer of timers) clearTimeout(timer);
    counts.inFlightAtKill += inFlight;
    const ends = renewalEnds(log);
    counts.renewalsInFlightAtKill += ends.inFlight;
    counts.renewalsCutByUnpublish += ends.cutByUnpublish;
    const exited = once(node.child, 'exit');
    node.child.kill('SIGKILL');
    if (!diedEarly) await exited;
    await Promise.allSettled(running);
    client.close();
    counts.renewalsSeen += log.find('certificate renewed').length;
    errorLines.push(...notableLines(log));
    current = undefined;
    t.same(unexpected, [], `no RPC failed before the kill (${where})`);

    // 6. What the kill left, before any restart repairs it.
    const uncertain = volumes.filter((v) => v.state === 'uncertain');
    for (const vol of uncertain) counts.uncertainVolumes.add(vol.id);
    if (uncertain.length > 0) counts.killsLeavingUncertain++;
    t.same(await checkVolumes(dataRoot, volumes, counts), [], `right after the kill (${where})`);
    atKill = new Map();
    for (const vol of volumes) {
      if (vol.state !== 'published' || vol.kind === 'long') continue;
      const meta = await metadataOf(dataRoot, vol.id);
      if (meta === undefined || isUnreadable(meta) || !meta.notAfter) continue;
      const attempt = nextAttemptOf(meta);
      if (attempt !== undefined) {
        atKill.set(vol.id, { at: attempt, notAfter: Date.parse(meta.notAfter) });
      }
    }
  }

  const elapsed = Math.round((Date.now() - began) / 1000);
  const byState = (s: Volume['state']) => volumes.filter((v) => v.state === s).length;
  const average = Math.round(startupMs.reduce((a, b) => a + b, 0) / startupMs.length);
  t.comment(
    [
      `${TRIALS} kills in ${elapsed} s (${replay}); plugin start-up ${average} ms on average`,
      `volumes: ${volumes.length} (${byState('published')} published and unpublished at the end, ${byState('gone')} unpublished in storms)`,
      `RPCs answered OK: ${counts.published} first publishes, ${counts.republished} republishes, ${counts.unpublished} unpublishes; ${counts.renewRequests} manual renewal requests`,
      `at the kills: ${counts.inFlightAtKill} RPCs in flight; ${counts.killsLeavingUncertain} kills left ${counts.uncertainVolumes.size} distinct volumes uncertain`,
      `renewals completed: ${counts.renewalsSeen}; begun and cut short by a kill: ${counts.renewalsInFlightAtKill}, by an unpublish: ${counts.renewalsCutByUnpublish}; due at a restart and renewed: ${counts.dueRenewalsAfterRestart}; expired before their renewal got a turn (then renewed): ${counts.lateRenewals}`,
      `harmless leftovers seen by the checks: ${counts.leftoverTempFiles.size} writer temp files (${namePatterns(counts.leftoverTempFiles)}), ${counts.staleGenerations.size} stale generation dirs, ${counts.interruptedRemovals.size} interrupted volume removals (finished at the next start)`,
      `warnings and errors logged by the plugins: ${errorLines.length}${errorLines.length > 0 ? `\n${errorLines.slice(0, 10).join('\n')}` : ''}`,
    ].join('\n'),
  );
}

/**
 * After the last kill: `cert-csi status` agrees, every renewing volume renews on its timer,
 * a manual renewal of all reaches every published volume (so all are managed), and every
 * volume unpublishes cleanly.
 */
async function finalRound(
  t: Test,
  ctx: {
    node: NodeProcess;
    log: NodeLog;
    dataRoot: DataRoot;
    socket: string;
    stateDir: string;
    volumes: Volume[];
    counts: Counts;
    where: string;
  },
): Promise<void> {
  const { node, log, dataRoot, socket, volumes, where } = ctx;
  const published = volumes.filter((v) => v.state === 'published');
  // `cert-csi status --json`, run in this process (a child would cost seconds of start-up).
  const statusCommand = async (): Promise<VolumeStatus[]> => {
    const { code, stdout, stderr } = await runInProcess(runStatus, [
      '--data-root',
      dataRoot.root,
      '--json',
    ]);
    if (code !== 0) throw new Error(`cert-csi status exited with ${code}: ${stderr}`);
    return JSON.parse(stdout) as VolumeStatus[];
  };
  t.same(
    await unscheduledVolumes(statusCommand, volumes, log, ctx.counts),
    [],
    `cert-csi status: every published volume is ok or pending with a next renewal (${where})`,
  );

  // Every renewing volume renews on its own timer within one lifetime.
  const renewing = published.filter((v) => v.kind !== 'long').map((v) => v.id);
  const onTime = await log.waitUntil(
    () => renewing.every((id) => log.find('certificate renewed', id).length > 0),
    RENEWAL_DEADLINE_MS,
  );
  t.ok(onTime, `every ${SHORT_DURATION} volume renewed on its timer (${where})`);

  // A manual renewal of all: the plugin answers for every volume it manages.
  const result = await askRenew(dataRoot, { all: true }, { timeoutMs: RENEWAL_DEADLINE_MS });
  const renewedIds = new Set(result.renewed.map((r) => r.volumeId));
  t.same(
    published.map((v) => v.id).filter((id) => !renewedIds.has(id)),
    [],
    `renew --all reached every published volume (${where})`,
  );

  const requestsDir = join(ctx.stateDir, 'cert-manager.io', 'certificaterequests', 'crash');
  const requestFiles = async () =>
    (await readdir(requestsDir).catch(() => [] as string[])).filter((n) => n.endsWith('.json'))
      .length;
  const requestsBefore = await requestFiles();

  // Unpublish everything still there (published or uncertain): nothing is left behind.
  const client = new CsiClient({ kind: 'unix', path: socket });
  const failures: string[] = [];
  for (const vol of volumes) {
    if (vol.state === 'gone') continue;
    try {
      await client.nodeCall('NodeUnpublishVolume', { volume_id: vol.id, target_path: vol.target });
    } catch (err) {
      failures.push(`${vol.id}: ${errorMessage(err)}`);
    }
  }
  client.close();
  t.same(failures, [], `every remaining volume unpublishes (${where})`);
  t.same(
    (await dataRoot.listVolumeIds()).filter((id) => id.startsWith('csi-crash-')),
    [],
    `no volume dir is left (${where})`,
  );
  t.equal(await node.stop(), 0, 'the last plugin stops cleanly on SIGTERM');
  // Not part of the acceptance, reported: requests left in the store once no volume is left
  // (an unpublish killed after removing the dir and before deleting its request).
  t.comment(
    `CertificateRequests in the store: ${requestsBefore} before the last unpublishes, ${await requestFiles()} once no volume is left`,
  );
}
