import { join } from 'node:path';
import type { Test } from 'tap';
import type { VolumeCertificateSpec } from '../../src/api/volume-spec.js';
import { specFromVolumeContext } from '../../src/attributes/stored-spec.js';
import { ManualClock } from '../../src/base/clock.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { DataRoot } from '../../src/volume/data-root.js';
import { readMetadata } from '../../src/volume/metadata.js';
import type { Mounter } from '../../src/volume/mounter.js';
import type { ControlHandlers } from '../../src/volume-manager/control/control-connection.js';
import type { IssuedCertificate } from '../../src/volume-manager/issuance/certificate-files.js';
import type { VolumeIssuance } from '../../src/volume-manager/issuance/volume-issuance.js';
import {
  type ManualRenewalDeps,
  renewNow,
} from '../../src/volume-manager/operations/manual-renewal.js';
import type { PublishDeps } from '../../src/volume-manager/operations/publish-volume.js';
import type { RediscoveryDeps } from '../../src/volume-manager/operations/rediscovery.js';
import { type RenewalDeps, renewVolume } from '../../src/volume-manager/operations/renew-volume.js';
import type { UnpublishDeps } from '../../src/volume-manager/operations/unpublish-volume.js';
import { PodReadiness } from '../../src/volume-manager/readiness/pod-readiness.js';
import { contextPodSource } from '../../src/volume-manager/readiness/pod-source.js';
import { DEFAULT_READINESS } from '../../src/volume-manager/settings.js';
import { FailureRecorder } from '../../src/volume-manager/state/failure-recorder.js';
import { RenewalScheduler } from '../../src/volume-manager/state/renewal-scheduler.js';
import { RenewalsAsked } from '../../src/volume-manager/state/renewals-asked.js';
import { storedSpec } from '../../src/volume-manager/state/stored-volume.js';
import {
  VolumeRegistry,
  type VolumeState,
} from '../../src/volume-manager/state/volume-registry.js';
import { VolumeTelemetry } from '../../src/volume-manager/telemetry/volume-telemetry.js';
import { TrustBundleSources } from '../../src/volume-manager/trust-bundles/trust-bundle-sources.js';
import { TrustBundleVolumes } from '../../src/volume-manager/trust-bundles/trust-bundle-volumes.js';
import { type LogRecord, recordingLogger } from '../support/recording-logger.js';
import { tempDir } from '../support/temp-dir.js';

/** The issuance step as an operation calls it. */
export type IssueFn = VolumeIssuance['issue'];

/** What every operation is given, in one object: each takes the part it declares. */
export type OperationDeps = PublishDeps &
  RenewalDeps &
  ManualRenewalDeps &
  UnpublishDeps &
  RediscoveryDeps & {
    trustBundles: TrustBundleVolumes;
    issuance: VolumeIssuance;
    telemetry: VolumeTelemetry;
  };

/** The operations' dependencies over a real data root, registry, scheduler and failure recorder, with fakes to watch. */
export interface TestParts {
  parts: OperationDeps;
  clock: ManualClock;
  logs: LogRecord[];
  /** Mounter calls, as `method dataDir targetPath`. */
  mounts: string[];
  /** Timer callbacks that fired, as [volumeId, reason]. */
  fired: Array<[string, string]>;
  issued: Array<[string, IssuedCertificate, string]>;
  failed: Array<[string, unknown]>;
  deletedRequests: string[];
}

/** Builds parts whose issuance runs issue (rejecting by default). */
export async function testParts(
  t: Test,
  issue: IssueFn = () => Promise.reject(new Error('no issuance in this test')),
): Promise<TestParts> {
  const dataRoot = new DataRoot(join(await tempDir(t), 'volumes'));
  await dataRoot.ensure();
  const clock = new ManualClock();
  const logger = recordingLogger();
  const registry = new VolumeRegistry();
  const mounts: string[] = [];
  const fired: Array<[string, string]> = [];
  const issued: Array<[string, IssuedCertificate, string]> = [];
  const failed: Array<[string, unknown]> = [];
  const deletedRequests: string[] = [];
  // Only the calls the operations make; each is recorded.
  const mounter = {
    publish: async (dataDir: string, target: string) =>
      void mounts.push(`publish ${dataDir} ${target}`),
    refresh: async (dataDir: string, target: string) =>
      void mounts.push(`refresh ${dataDir} ${target}`),
    unpublish: async (dataDir: string, target: string) =>
      void mounts.push(`unpublish ${dataDir} ${target}`),
  } as unknown as Mounter;
  // The operations call only issue and deleteRequests.
  const issuance = {
    issue,
    deleteRequests: async (volumeId: string) => void deletedRequests.push(volumeId),
  } as unknown as VolumeIssuance;
  const parts: OperationDeps = {
    dataRoot,
    mounter,
    logger,
    clock,
    registry,
    scheduler: new RenewalScheduler(clock, 0, (volumeId, reason) => {
      fired.push([volumeId, reason]);
    }),
    issuance,
    failures: new FailureRecorder({
      dataRoot,
      registry,
      clock,
      logger,
      backoff: { initialMs: 30_000, factor: 2, capMs: 300_000, jitter: 0 },
    }),
    onIssued: (volumeId, certificate, reason) => void issued.push([volumeId, certificate, reason]),
    onFailed: (volumeId, _context, err) => void failed.push([volumeId, err]),
    // The manager's renew: the renewal operation over these same parts.
    renew: (volumeId, reason) => renewVolume(parts, volumeId, reason),
    asked: new RenewalsAsked(),
    // No volume of these tests asks for a reload (test/plugin/reload-*.test.ts do).
    reloadSignals: 'off',
    reloader: { rewritten: () => {} },
    ...quietFollowers(t, { dataRoot, mounter, logger, registry, clock }),
  };
  return { parts, clock, logs: logger.records, mounts, fired, issued, failed, deletedRequests };
}

/**
 * The parts that follow volumes for other concerns, doing nothing for volumes without them:
 * trust bundles (no source watched), telemetry (no subscriber) and embedded mode's readiness
 * (no gates, pods described by their volume context).
 */
export function quietFollowers(
  t: Test,
  parts: Pick<OperationDeps, 'dataRoot' | 'mounter' | 'logger' | 'registry' | 'clock'>,
): Pick<OperationDeps, 'trustBundles' | 'telemetry' | 'readiness'> {
  const sources = new TrustBundleSources(new MemoryStore(), { onChange: () => undefined });
  t.teardown(() => sources.stop());
  return {
    trustBundles: new TrustBundleVolumes(parts, sources),
    telemetry: new VolumeTelemetry('test-node'),
    readiness: new PodReadiness(contextPodSource, DEFAULT_READINESS, parts.clock, () => {}),
  };
}

/**
 * Manages a volume on disk as rediscovery does, without arming its timer or mirroring it:
 * its attributes parsed once from its metadata.json, its state registered.
 */
export async function manage(parts: OperationDeps, volumeId: string): Promise<VolumeState> {
  const metadata = await readMetadata(parts.dataRoot, volumeId);
  return parts.registry.manage(volumeId, await storedSpec(parts.dataRoot, volumeId, metadata));
}

/** The spec of a volume context, parsed as at publish. */
export function specFor(volumeContext: Record<string, string>): VolumeCertificateSpec {
  return specFromVolumeContext(volumeContext, undefined);
}

/** A stand-in for an issued certificate: the operations read only its times. */
export function fakeIssued(clock: ManualClock, renewInMs: number): IssuedCertificate {
  return {
    notAfter: new Date(clock.now() + 2 * renewInMs),
    nextIssuanceTime: new Date(clock.now() + renewInMs),
  } as IssuedCertificate;
}

/** An issuance whose calls wait for the test, and what it holds. */
export interface HeldIssuance {
  issue: IssueFn;
  /** The volume of each call waiting, oldest first. */
  held(): string[];
  /** Lets the oldest waiting call for the volume end with a certificate (an hour to renewal). */
  release(volumeId: string): void;
}

/** An issuance that holds every call until the test releases it. */
export function heldIssuance(): HeldIssuance {
  const waiting: Array<{ volumeId: string; resolve: (issued: IssuedCertificate) => void }> = [];
  return {
    issue: (volumeId) => new Promise((resolve) => waiting.push({ volumeId, resolve })),
    held: () => waiting.map((w) => w.volumeId),
    release(volumeId) {
      const index = waiting.findIndex((w) => w.volumeId === volumeId);
      const [call] = index < 0 ? [] : waiting.splice(index, 1);
      if (!call) throw new Error(`no issuance of ${volumeId} is held`);
      const now = Date.now();
      // The operations read only its times.
      call.resolve({
        notAfter: new Date(now + 2 * 3600_000),
        nextIssuanceTime: new Date(now + 3600_000),
      } as IssuedCertificate);
    },
  };
}

/** The control socket's handlers over the operations of parts, as the node plugin wires them. */
export function managerControlHandlers(parts: OperationDeps): ControlHandlers {
  return {
    renew: (target, progress) => renewNow(parts, target, progress),
    unsavedFailures: () => parts.failures.unsavedFailures(),
    renewalsAsked: () => parts.asked.volumeIds(),
  };
}
