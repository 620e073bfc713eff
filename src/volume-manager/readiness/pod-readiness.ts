import { podIPsOf } from '../../api/pod.js';
import type { VolumeCertificateSpec } from '../../api/volume-spec.js';
import type { Clock } from '../../base/clock.js';
import { TimerSet } from '../../base/timer-set.js';
import { type BackoffPolicy, backoffDelay, countFailedAttempt } from '../policy/renewal-policy.js';
import type { PodSource } from './pod-source.js';
import {
  gatesProblem,
  POD_HAS_IP_GATE,
  podNotObserved,
  type ReadinessGate,
} from './readiness-gate.js';

/** csi-driver's --continue-on-not-ready, --pod-readiness-gate and --gate-backoff-* options. */
export interface ReadinessOptions {
  continueOnNotReady: boolean;
  gates: ReadinessGate[];
  /** How long a volume whose gates do not pass waits before they are evaluated again. */
  gateBackoff: BackoffPolicy;
}

/** Whether a volume's pod lets it be issued now, and the pod's IPs when the volume uses them. */
export type ReadinessVerdict =
  | { ready: true; podIPs?: string[] }
  /** A pod that is not ready has no IPs to issue with. */
  | { ready: false; reason: string; podIPs?: undefined };

/**
 * Decides whether a volume's issuance may start (its pod passes the readiness gates, and has
 * an IP when the volume's SANs use ${POD_IP} or ${POD_IPS}), and tells the volume manager when
 * a watched volume's pod changes, or when a volume whose gates failed is due for another look
 * (the gate backoff, for changes the pod source would not report).
 */
export class PodReadiness {
  private readonly watched = new Map<string, string>();
  private readonly byPod = new Map<string, Set<string>>();
  private readonly notReadyCounts = new Map<string, number>();
  private readonly retries: TimerSet;
  private stopWatching: () => void = () => {};
  private stopped = false;

  constructor(
    private readonly source: PodSource,
    private readonly options: ReadinessOptions,
    private readonly clock: Clock,
    /** Called when a watched volume's pod changed or its gate retry is due. */
    private readonly onPodChange: (volumeId: string) => void,
  ) {
    this.retries = new TimerSet(clock);
  }

  /** Fills the pod cache and starts listening to it. */
  async start(signal?: AbortSignal): Promise<void> {
    await this.source.start(signal);
    this.stopWatching = this.source.onChange((namespace, name) => {
      for (const volumeId of this.byPod.get(podKey(namespace, name)) ?? []) {
        this.onPodChange(volumeId);
      }
    });
  }

  /** Stops listening and every gate retry. */
  stop(): void {
    this.stopped = true;
    this.stopWatching();
    this.retries.clear();
  }

  /**
   * True when the volume's issuance depends on its pod: readiness gates with
   * --continue-on-not-ready, or SANs using the pod's IPs.
   */
  applies(spec: Pick<VolumeCertificateSpec, 'podIPs'>): boolean {
    return (
      spec.podIPs !== undefined ||
      (this.options.continueOnNotReady && this.options.gates.length > 0)
    );
  }

  /**
   * True when a volume whose pod is not ready is published empty and issued later; false in
   * embedded mode, where the pod can never change.
   */
  get canWait(): boolean {
    return this.source.changes;
  }

  /** Evaluates the gates (and the implied pod-ip gate) against the volume's pod. */
  evaluate(
    spec: Pick<VolumeCertificateSpec, 'podIPs' | 'pod'>,
    volumeContext: Readonly<Record<string, string>>,
  ): ReadinessVerdict {
    const usesPodIPs = spec.podIPs !== undefined;
    const pod = this.source.get(spec.pod, volumeContext);
    if (!pod) return { ready: false, reason: podNotObserved(spec.pod.namespace, spec.pod.name) };
    const gates = usesPodIPs ? [...this.options.gates, POD_HAS_IP_GATE] : this.options.gates;
    const reason = gatesProblem(gates, pod);
    if (reason !== undefined) return { ready: false, reason };
    return usesPodIPs ? { ready: true, podIPs: podIPsOf(pod) } : { ready: true };
  }

  /** The verdict for a volume now: evaluated when readiness applies to it, else ready. */
  verdict(
    spec: Pick<VolumeCertificateSpec, 'podIPs' | 'pod'>,
    volumeContext: Readonly<Record<string, string>>,
  ): ReadinessVerdict {
    return this.applies(spec) ? this.evaluate(spec, volumeContext) : { ready: true };
  }

  /** Tells onPodChange about every change of the volume's pod until forget. */
  watch(volumeId: string, pod: { namespace: string; name: string }): void {
    this.unindex(volumeId);
    const key = podKey(pod.namespace, pod.name);
    this.watched.set(volumeId, key);
    let volumes = this.byPod.get(key);
    if (!volumes) {
      volumes = new Set();
      this.byPod.set(key, volumes);
    }
    volumes.add(volumeId);
  }

  /** Calls onPodChange for the volume now (asynchronously), as if its pod changed. */
  look(volumeId: string): void {
    queueMicrotask(() => this.onPodChange(volumeId));
  }

  /** True while the volume is watched. */
  isWatching(volumeId: string): boolean {
    return this.watched.has(volumeId);
  }

  /**
   * Arms the volume's gate retry after one more failed evaluation (the gate backoff): a
   * change the informer reports comes first anyway.
   */
  retryLater(volumeId: string, random = Math.random): number | undefined {
    // A look that ends after stop() arms nothing: no timer outlives the plugin.
    if (this.stopped) return undefined;
    const { gate } = countFailedAttempt(
      { gate: this.notReadyCounts.get(volumeId) ?? 0, issuance: 0 },
      'gate',
    );
    this.notReadyCounts.set(volumeId, gate);
    const delay = backoffDelay(gate, this.options.gateBackoff, random);
    this.retries.schedule(volumeId, this.clock.now() + delay, () => this.onPodChange(volumeId));
    return delay;
  }

  /**
   * The volume's gates passed: its next gate failure starts the gate backoff afresh (an
   * issuance, and so any issuance failure, comes only after the gates pass).
   */
  passed(volumeId: string): void {
    this.notReadyCounts.delete(volumeId);
    this.retries.cancel(volumeId);
  }

  /** Stops watching the volume (unpublished) and drops its retry. */
  forget(volumeId: string): void {
    this.unindex(volumeId);
    this.passed(volumeId);
  }

  private unindex(volumeId: string): void {
    const key = this.watched.get(volumeId);
    if (key === undefined) return;
    this.watched.delete(volumeId);
    const volumes = this.byPod.get(key);
    volumes?.delete(volumeId);
    if (volumes?.size === 0) this.byPod.delete(key);
  }
}

function podKey(namespace: string | undefined, name: string): string {
  return `${namespace}/${name}`;
}
