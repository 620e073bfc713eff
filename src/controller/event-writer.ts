import type { EventRecorder, EventType } from '../api/event.js';
import { type KubeEvent, KubeEventKind } from '../api/kube-event.js';
import type { Logger } from '../api/logger.js';
import { apiVersionOf, type KubeObject } from '../api/meta.js';
import { type Clock, systemClock } from '../base/clock.js';
import { errorMessage } from '../base/error-message.js';
import type { ResourceStore } from '../store/resource-store.js';

export interface EventWriterOptions {
  store: ResourceStore;
  /** `source.component` and `reportingComponent`, e.g. `cert-csi-node`. */
  component: string;
  /** The node or pod that reports, e.g. the node name. */
  host?: string;
  logger: Logger;
  clock?: Clock;
  /** The same event about the same object is written at most once per this window. */
  dedupeWindowMs?: number;
  /** How many recent events are remembered for that (the oldest is forgotten first). */
  maxRemembered?: number;
}

const DEFAULT_DEDUPE_WINDOW_MS = 10 * 60_000;
/** Where Events about cluster-scoped objects live, as client-go's recorder puts them. */
const CLUSTER_SCOPED_EVENT_NAMESPACE = 'default';
const MAX_REMEMBERED = 10_000;

/**
 * Records events as core/v1 Events through the store, so `kubectl describe` shows them
 * under the object. Writes in the background (a failed write is logged, never thrown at
 * the caller) and skips a repeat of the same event within the window, so a volume retrying
 * every few seconds does not flood the API with identical Events.
 */
export class EventWriter implements EventRecorder {
  private readonly recent = new Map<string, number>();
  private readonly clock: Clock;
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly options: EventWriterOptions) {
    this.clock = options.clock ?? systemClock;
  }

  /**
   * Records an event about object: in the object's namespace, or in `default` for a
   * cluster-scoped object (a CertificateSigningRequest, a ClusterIssuer), whose Event then
   * names no namespace in involvedObject, as Kubernetes' recorder does.
   */
  event(object: KubeObject, type: EventType, reason: string, message: string): void {
    const { namespace, name, uid } = object.metadata;
    const fields = { event: reason, object: `${object.kind}/${namespace ?? ''}/${name}` };
    if (type === 'Warning') this.options.logger.warn(fields, message);
    else this.options.logger.info(fields, message);
    const now = this.clock.now();
    const key = JSON.stringify([object.kind, namespace, name, uid, type, reason, message]);
    const last = this.recent.get(key);
    if (
      last !== undefined &&
      now - last < (this.options.dedupeWindowMs ?? DEFAULT_DEDUPE_WINDOW_MS)
    )
      return;
    this.recent.delete(key);
    this.recent.set(key, now);
    if (this.recent.size > (this.options.maxRemembered ?? MAX_REMEMBERED)) {
      const oldest = this.recent.keys().next().value;
      if (oldest !== undefined) this.recent.delete(oldest);
    }
    const time = new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const body: KubeEvent = {
      apiVersion: apiVersionOf(KubeEventKind),
      kind: KubeEventKind.kind,
      metadata: {
        name: '',
        generateName: `${name}.`,
        namespace: namespace || CLUSTER_SCOPED_EVENT_NAMESPACE,
      },
      involvedObject: {
        apiVersion: object.apiVersion,
        kind: object.kind,
        name,
        ...(namespace ? { namespace } : {}),
        ...(uid ? { uid } : {}),
      },
      reason,
      message,
      type,
      source: {
        component: this.options.component,
        ...(this.options.host ? { host: this.options.host } : {}),
      },
      firstTimestamp: time,
      lastTimestamp: time,
      count: 1,
      reportingComponent: this.options.component,
      reportingInstance: this.options.host ?? this.options.component,
    };
    const write = this.options.store
      .create(KubeEventKind, body)
      .then(
        () => undefined,
        (err: unknown) => {
          this.options.logger.warn({ ...fields, err: errorMessage(err) }, 'cannot write Event');
        },
      )
      .finally(() => this.pending.delete(write));
    this.pending.add(write);
  }

  /** Resolves when every event write started so far has finished. */
  async flush(): Promise<void> {
    await Promise.all([...this.pending]);
  }
}
