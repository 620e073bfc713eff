import { readFile } from 'node:fs/promises';
import type { Logger } from '../../api/logger.js';
import { podIPsOf } from '../../api/pod.js';
import type { ReloadSpec, VolumeCertificateSpec } from '../../api/volume-spec.js';
import { reloadUrl } from '../../attributes/reload-attributes.js';
import type { ErrorKind } from '../../base/error-catalogue.js';
import { errorMessage } from '../../base/error-message.js';
import { publishFact } from '../../base/telemetry.js';
import { readProcTable } from '../../fs/proc-table.js';
import { reloadTargets } from '../policy/reload-target.js';
import type { PodSource } from '../readiness/pod-source.js';
import type { PodEvent } from '../telemetry/failure-event.js';
import { HTTP_RELOAD_DEFAULTS, type HttpReloadOptions, postReload } from './http-reload.js';

/**
 * Whether this node sends reload signals: never (the default), to the init process of the
 * pod's container found through /proc (`cert-csi node --reload-signals`, with hostPID), or to
 * the pid a PID file names (embedded mode, one machine).
 */
export type ReloadSignalMode = 'off' | 'pod-processes' | 'pid-file';

/** What a VolumeReloader works with. */
export interface VolumeReloaderDeps {
  nodeId: string;
  podSource: Pick<PodSource, 'get'>;
  signals: ReloadSignalMode;
  /** The /proc tree to find containers' processes in. */
  procRoot: string;
  logger: Logger;
  /** Records an Event on the volume's pod. */
  onEvent: (event: PodEvent) => void;
  http?: HttpReloadOptions;
}

/** Why a volume's reload attributes cannot be served on this node, or undefined. */
export function reloadRefusal(
  reload: ReloadSpec | undefined,
  mode: ReloadSignalMode,
): string | undefined {
  const signal = reload?.signal;
  if (signal === undefined) return undefined;
  if (mode === 'off') {
    return 'reload signals are not enabled on this node (cert-csi node --reload-signals)';
  }
  if (mode === 'pid-file' && signal.pidFile === undefined) {
    return 'reload-signal needs reload-pid-file in embedded mode: there are no pod containers to find';
  }
  if (mode === 'pod-processes' && signal.pidFile !== undefined) {
    return 'reload-pid-file is for embedded mode only: a pod may not name a node file';
  }
  return undefined;
}

/**
 * Tells a volume's application of each rewrite, as its reload attributes ask: a POST to the
 * pod's own IP and a signal to its container's init process. Runs detached from the rewrite
 * (a slow endpoint delays no renewal and no other volume); each outcome is logged, counted and
 * recorded as an Event on the pod.
 */
export class VolumeReloader {
  private readonly running = new Set<Promise<void>>();
  private readonly stopping = new AbortController();

  constructor(private readonly deps: VolumeReloaderDeps) {}

  /** Starts the notifications of one rewrite and returns at once; nothing once stopped. */
  rewritten(
    volumeId: string,
    spec: VolumeCertificateSpec,
    volumeContext: Record<string, string>,
  ): void {
    const reload = spec.reload;
    if (reload === undefined || this.stopping.signal.aborted) return;
    const work: Promise<void>[] = [];
    if (reload.url !== undefined) work.push(this.post(volumeId, spec, volumeContext, reload.url));
    if (reload.signal !== undefined)
      work.push(this.signal(volumeId, spec, volumeContext, reload.signal));
    const all = Promise.all(work).then(() => {});
    this.running.add(all);
    void all.finally(() => this.running.delete(all));
  }

  /** Resolves when every notification started so far has ended (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }

  /**
   * Cancels every pending POST and retry wait, starts nothing more, and resolves once the
   * notifications in flight have ended (at once: an abort ends a request and a wait).
   */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.idle();
  }

  private async post(
    volumeId: string,
    spec: VolumeCertificateSpec,
    volumeContext: Record<string, string>,
    template: string,
  ): Promise<void> {
    const pod = this.deps.podSource.get(spec.pod, volumeContext);
    const ips = pod ? podIPsOf(pod) : [];
    const url = ips[0] === undefined ? undefined : reloadUrl(template, ips[0]);
    const problem =
      url === undefined
        ? 'the pod has no IP'
        : await postReload(url, this.deps.http ?? HTTP_RELOAD_DEFAULTS, this.stopping.signal);
    this.tell(volumeId, spec, 'http', problem, url === undefined ? template : url.href);
  }

  private async signal(
    volumeId: string,
    spec: VolumeCertificateSpec,
    volumeContext: Record<string, string>,
    signal: NonNullable<ReloadSpec['signal']>,
  ): Promise<void> {
    let problem: string | undefined;
    let pids: number[] = [];
    try {
      const found = await this.findPids(spec, volumeContext, signal);
      if (found.ok) {
        pids = found.pids;
        for (const pid of pids) process.kill(pid, signal.name);
      } else {
        problem = found.problem;
      }
    } catch (err) {
      problem = errorMessage(err);
    }
    this.tell(volumeId, spec, 'signal', problem, `${signal.name} to pid ${pids.join(', ') || '-'}`);
  }

  private async findPids(
    spec: VolumeCertificateSpec,
    volumeContext: Record<string, string>,
    signal: NonNullable<ReloadSpec['signal']>,
  ): Promise<{ ok: true; pids: number[] } | { ok: false; problem: string }> {
    if (signal.pidFile !== undefined) {
      if (this.deps.signals !== 'pid-file')
        return { ok: false, problem: 'PID files are for embedded mode only' };
      const text = (await readFile(signal.pidFile, 'utf8')).trim();
      const pid = Number(text);
      if (!/^[1-9][0-9]{0,9}$/.test(text) || pid <= 1) {
        return { ok: false, problem: `PID file ${signal.pidFile} holds no pid` };
      }
      return { ok: true, pids: [pid] };
    }
    if (this.deps.signals !== 'pod-processes') {
      return { ok: false, problem: 'reload signals are not enabled on this node' };
    }
    const pod = this.deps.podSource.get(spec.pod, volumeContext);
    if (pod === undefined) return { ok: false, problem: 'the pod is not known to the node' };
    const containers = (pod.status?.containerStatuses ?? []).map((c) => ({
      name: c.name,
      containerID: c.containerID ?? '',
    }));
    return reloadTargets({
      processes: await readProcTable(this.deps.procRoot),
      podUid: pod.metadata.uid ?? '',
      containers,
      container: signal.container,
    });
  }

  private tell(
    volumeId: string,
    spec: VolumeCertificateSpec,
    mechanism: 'http' | 'signal',
    problem: string | undefined,
    what: string,
  ): void {
    const { logger, nodeId } = this.deps;
    if (this.stopping.signal.aborted) {
      // Cut short by the plugin stopping, not a failure of the application: no Event.
      logger.info({ volumeId, mechanism, what }, 'reload notification cancelled: the plugin stops');
      return;
    }
    publishFact('reload', {
      nodeId,
      mechanism,
      outcome: problem === undefined ? 'sent' : 'failed',
    });
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: spec.pod.name, namespace: spec.pod.namespace, uid: spec.pod.uid },
    };
    if (problem === undefined) {
      logger.info({ volumeId, mechanism, what }, 'application told of the new certificate');
      this.deps.onEvent({
        pod,
        type: 'Normal',
        reason:
          mechanism === 'signal' ? 'CertificateReloadSignalled' : 'CertificateReloadRequested',
        message: `volume ${volumeId}: ${what}`,
      });
      return;
    }
    logger.warn(
      { volumeId, mechanism, what, problem },
      'could not tell the application of the new certificate',
    );
    this.deps.onEvent({
      pod,
      type: 'Warning',
      reason: 'CertificateReloadFailed',
      message: `volume ${volumeId}: ${mechanism} reload not sent: ${problem}`,
    });
  }
}

/** A publish refused because the node does not serve the volume's reload attributes. */
export class ReloadRefusedError extends Error {
  override readonly name = 'ReloadRefusedError';

  get errorKind(): ErrorKind {
    return 'CERT_CSI_RELOAD_REFUSED';
  }
}
