import type { KeyObject } from 'node:crypto';
import { type CertificateRequest, CertificateRequestKind } from '../api/certificate-request.js';
import type { Logger } from '../api/logger.js';
import { type Clock, systemClock } from '../base/clock.js';
import type { SharedInformers } from '../controller/shared-informers.js';
import type { LocalIssuer } from '../issuer/certificaterequests/local-issuance.js';
import type { ResourceStore } from '../store/resource-store.js';
import type { DataRoot } from '../volume/data-root.js';
import type { Mounter } from '../volume/mounter.js';
import type { IssuedCertificate } from './issuance/certificate-files.js';
import type { IssuanceCheck } from './issuance/issuance-check.js';
import { RequestTracker } from './issuance/request-tracker.js';
import { VolumeIssuance } from './issuance/volume-issuance.js';
import type { ManualRenewalDeps } from './operations/manual-renewal.js';
import { type PodChangeDeps, podChanged } from './operations/pod-change.js';
import type { PublishDeps } from './operations/publish-volume.js';
import type { RediscoveryDeps } from './operations/rediscovery.js';
import {
  type FailedListener,
  type IssuedListener,
  type RenewalDeps,
  renewVolume,
} from './operations/renew-volume.js';
import type { UnpublishDeps } from './operations/unpublish-volume.js';
import { PodReadiness } from './readiness/pod-readiness.js';
import { contextPodSource, type PodSource } from './readiness/pod-source.js';
import type { HttpReloadOptions } from './reload/http-reload.js';
import { VolumeReloader } from './reload/volume-reloader.js';
import type { VolumeManagerSettings } from './settings.js';
import { FailureRecorder } from './state/failure-recorder.js';
import { RenewalScheduler } from './state/renewal-scheduler.js';
import { RenewalsAsked } from './state/renewals-asked.js';
import { readStoredMetadata } from './state/stored-volume.js';
import { VolumeRegistry } from './state/volume-registry.js';
import type { PodEvent } from './telemetry/failure-event.js';
import { VolumeTelemetry } from './telemetry/volume-telemetry.js';
import { TrustBundleSources } from './trust-bundles/trust-bundle-sources.js';
import { TrustBundleVolumes } from './trust-bundles/trust-bundle-volumes.js';

/** What a volume manager is built from: its settings, and the parts of the process it uses. */
export interface VolumeManagerOptions {
  settings: VolumeManagerSettings;
  store: ResourceStore;
  /** The process's informers; the node's CertificateRequests come from its request informer. */
  informers: SharedInformers;
  /**
   * Keys of this node's requests in flight by `namespace/name`, written here and read by an
   * in-process SelfSigned signer (embedded mode); private to the manager when absent.
   */
  pendingKeys?: Map<string, KeyObject> | undefined;
  dataRoot: DataRoot;
  mounter: Mounter;
  logger: Logger;
  clock?: Clock | undefined;
  /** Told after each certificate written (first issuance or renewal); for metrics and tests. */
  onIssued?: IssuedListener | undefined;
  /** Told when a publish or renewal fails (not when it was cut short by an unpublish). */
  onFailed?: FailedListener | undefined;
  /**
   * The store that creates a volume's CertificateRequest, from the pod's service-account
   * tokens of its latest publish (`--use-token-request`); throws when they are unusable.
   * Without it the plugin's own store creates requests.
   */
  requestCreator?: ((serviceAccountTokens: string | undefined) => ResourceStore) | undefined;
  /**
   * Where volumes' pods are read, for readiness gates and ${POD_IP}: the node's pod informer
   * in Kubernetes mode; by default the volume context (embedded mode).
   */
  podSource?: PodSource | undefined;
  /** What a first publish must pass besides its attributes (embedded mode: the issuer's consent). */
  issuanceCheck?: IssuanceCheck | undefined;
  /**
   * Signs a volume's new request as it is created when its issuer is this process's own and
   * approval is automatic (embedded mode); every request is waited for through the watch when absent.
   */
  localIssuer?: LocalIssuer | undefined;
  /** Records an Event on a volume's pod (reload notifications); dropped when absent. */
  onEvent?: ((event: PodEvent) => void) | undefined;
  /** The /proc tree reload signals find containers' processes in (`/proc` by default). */
  procRoot?: string | undefined;
  /** How reload POSTs are tried (timeout, attempts, backoff); the node's defaults when absent. */
  reloadHttp?: HttpReloadOptions | undefined;
}

/** A volume manager's parts, and what each of its operations is given of them. */
export interface VolumeManagerWiring {
  tracker: RequestTracker;
  readiness: PodReadiness;
  registry: VolumeRegistry;
  scheduler: RenewalScheduler;
  failures: FailureRecorder;
  trustBundleSources: TrustBundleSources;
  trustBundles: TrustBundleVolumes;
  publish: PublishDeps;
  renewal: RenewalDeps;
  manual: ManualRenewalDeps;
  unpublish: UnpublishDeps;
  rediscovery: RediscoveryDeps;
  /** Tells applications of their volumes' rewrites. */
  reloader: VolumeReloader;
  /** Renews one managed volume now, for a reason. */
  renew: (volumeId: string, reason: string) => Promise<IssuedCertificate | undefined>;
}

/**
 * Builds a volume manager's parts once, and gives each operation exactly the dependencies it
 * declares: the only place that knows them all.
 */
export function wireVolumeManager(options: VolumeManagerOptions): VolumeManagerWiring {
  const { settings, dataRoot, mounter, logger, store } = options;
  const clock = options.clock ?? systemClock;
  const tracker = new RequestTracker(
    options.informers.informer<CertificateRequest>(CertificateRequestKind),
    settings.nodeId,
  );
  const registry = new VolumeRegistry();
  // Its own informers, one per watched source, started by the first volume that uses it.
  const trustBundleSources = new TrustBundleSources(store, {
    clock,
    onError: (err) => logger.warn({ err: err.message }, 'trust bundle watch failed; retrying'),
    onChange: (volumeIds) => trustBundles.changed(volumeIds),
  });
  const podSource = options.podSource ?? contextPodSource;
  const reloader = new VolumeReloader({
    nodeId: settings.nodeId,
    podSource,
    signals: settings.reloadSignals,
    procRoot: options.procRoot ?? '/proc',
    logger,
    onEvent: options.onEvent ?? (() => {}),
    ...(options.reloadHttp ? { http: options.reloadHttp } : {}),
  });
  const trustBundles = new TrustBundleVolumes(
    {
      dataRoot,
      mounter,
      logger,
      registry,
      clock,
      // The pod's IPs of embedded mode live in the volume context, kept in metadata.json.
      onRewritten: async (volumeId, spec) => {
        const stored = await readStoredMetadata(dataRoot, volumeId);
        if (stored) reloader.rewritten(volumeId, spec, stored.volumeContext);
      },
    },
    trustBundleSources,
  );
  const telemetry = new VolumeTelemetry(settings.nodeId);
  const failures = new FailureRecorder({
    dataRoot,
    registry,
    clock,
    logger,
    backoff: settings.backoff,
  });
  const issuance = new VolumeIssuance({
    store,
    tracker,
    pendingKeys: options.pendingKeys ?? new Map(),
    settings,
    dataRoot,
    registry,
    failures,
    trustBundles,
    logger,
    clock,
    requestCreator: options.requestCreator ?? (() => store),
    telemetry,
    localIssuer: options.localIssuer,
    copiedToTarget: mounter.mode === 'direct',
  });
  const renew = (volumeId: string, reason: string) => renewVolume(renewal, volumeId, reason);
  const scheduler = new RenewalScheduler(clock, settings.renewalJitterMs, (volumeId, reason) => {
    void renew(volumeId, reason);
  });
  const readiness = new PodReadiness(podSource, settings.readiness, clock, (volumeId) => {
    void podChanged(podChange, volumeId, renew);
  });
  const onIssued = options.onIssued ?? (() => {});
  const onFailed = options.onFailed ?? (() => {});
  const podChange: PodChangeDeps = { readiness, registry, dataRoot, clock, logger };
  const renewal: RenewalDeps = {
    ...podChange,
    mounter,
    issuance,
    scheduler,
    failures,
    reloader,
    onIssued,
    onFailed,
  };
  return {
    reloader,
    tracker,
    readiness,
    registry,
    scheduler,
    failures,
    trustBundleSources,
    trustBundles,
    renew,
    renewal,
    publish: {
      ...podChange,
      mounter,
      issuance,
      scheduler,
      failures,
      trustBundles,
      issuanceCheck: options.issuanceCheck,
      reloadSignals: settings.reloadSignals,
      telemetry,
      onIssued,
      onFailed,
    },
    manual: { registry, dataRoot, failures, renew, asked: new RenewalsAsked() },
    unpublish: {
      dataRoot,
      mounter,
      logger,
      registry,
      scheduler,
      readiness,
      trustBundles,
      failures,
      telemetry,
      issuance,
    },
    rediscovery: {
      dataRoot,
      mounter,
      logger,
      clock,
      registry,
      scheduler,
      trustBundles,
      telemetry,
      readiness,
    },
  };
}
