import {
  type CertificateRequest,
  CertificateRequestKind,
} from '../../src/api/certificate-request.js';
import type { Logger } from '../../src/api/logger.js';
import { type Clock, systemClock, type TimerHandle } from '../../src/base/clock.js';
import type { SharedInformers } from '../../src/controller/shared-informers.js';
import { until } from './eventually.js';

/**
 * The attempt timeout of a plugin whose deadlines are held. No other timer of the plugin lasts
 * exactly this long, so the clock below can tell an issuance deadline from everything else.
 */
export const HELD_DEADLINE_MS = 7_777_777;

class HeldTimer {
  armed: TimerHandle | undefined;
  constructor(readonly fire: () => void) {}
}

/**
 * A clock that holds every issuance deadline (a timer of HELD_DEADLINE_MS) until the test
 * expires or releases it; every other timer is the system clock's. A test of what a publish
 * reports at its deadline then ends the wait once it has seen the publish waiting, instead of
 * racing a real deadline that a busy machine can pass before the request even exists.
 */
export class HeldDeadlines implements Clock {
  private readonly held = new Set<HeldTimer>();

  now(): number {
    return systemClock.now();
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    if (ms !== HELD_DEADLINE_MS) return systemClock.setTimeout(fn, ms);
    const timer = new HeldTimer(fn);
    this.held.add(timer);
    return timer;
  }

  clearTimeout(handle: TimerHandle): void {
    if (!(handle instanceof HeldTimer)) {
      systemClock.clearTimeout(handle);
      return;
    }
    this.held.delete(handle);
    if (handle.armed) systemClock.clearTimeout(handle.armed);
  }

  /** Fires every held deadline now; returns how many fired. */
  expire(): number {
    const timers = [...this.held];
    this.held.clear();
    for (const timer of timers) {
      if (timer.armed) systemClock.clearTimeout(timer.armed);
      timer.fire();
    }
    return timers.length;
  }

  /** Starts every held deadline on the system clock, to fire after ms like any real one. */
  release(ms: number): number {
    let started = 0;
    for (const timer of this.held) {
      if (timer.armed) continue;
      timer.armed = systemClock.setTimeout(() => {
        this.held.delete(timer);
        timer.fire();
      }, ms);
      started += 1;
    }
    return started;
  }
}

/** A publish found waiting: its volume and the request it waits for. */
export interface Waiting {
  volumeId: string;
  request: string;
  namespace: string;
}

/**
 * A logger that keeps only the issuance's "waiting for CertificateRequest" lines (with the
 * child's bindings, so the volume is known) and drops everything else, as the silent one does.
 */
export class WaitingLog implements Logger {
  private readonly waits: Waiting[];
  private readonly seen: Set<Waiting>;

  constructor(
    private readonly bindings: Record<string, unknown> = {},
    shared?: { waits: Waiting[]; seen: Set<Waiting> },
  ) {
    this.waits = shared?.waits ?? [];
    this.seen = shared?.seen ?? new Set();
  }

  debug(obj: object, msg?: string): void {
    if (msg !== 'waiting for CertificateRequest') return;
    const fields: Record<string, unknown> = { ...this.bindings, ...obj };
    const { volumeId, request, namespace } = fields;
    if (
      typeof volumeId === 'string' &&
      typeof request === 'string' &&
      typeof namespace === 'string'
    )
      this.waits.push({ volumeId, request, namespace });
  }

  info(): void {}
  warn(): void {}
  error(): void {}

  child(bindings: Record<string, unknown>): Logger {
    return new WaitingLog(
      { ...this.bindings, ...bindings },
      { waits: this.waits, seen: this.seen },
    );
  }

  /** The next wait of volumeId not taken before (publishes of one volume wait in turn). */
  take(volumeId: string): Waiting | undefined {
    const next = this.waits.find((w) => w.volumeId === volumeId && !this.seen.has(w));
    if (next) this.seen.add(next);
    return next;
  }
}

/** A plugin started with held deadlines: what expireOnceWaiting needs of it. */
export interface HeldDeadlinePlugin {
  deadlines: HeldDeadlines;
  waiting: WaitingLog;
  informers: SharedInformers;
}

/**
 * Waits until the publish of volumeId waits for its request and the node's own cache shows
 * that request as `seen` accepts (what the publish will report), then expires the held
 * deadlines: the publish ends with DEADLINE_EXCEEDED and the state it was waiting in.
 * Returns the request waited for; an abort of signal ends the wait with an error.
 */
export async function expireOnceWaiting(
  plugin: HeldDeadlinePlugin,
  volumeId: string,
  seen: (request: CertificateRequest) => boolean = () => true,
  signal?: AbortSignal,
): Promise<Waiting> {
  // Generous bounds: these wait for the plugin, whose own deadline is held meanwhile.
  const waiting = await until(() => plugin.waiting.take(volumeId), {
    what: `the publish of ${volumeId} to wait for its request`,
    timeoutMs: 60_000,
    ...(signal ? { signal } : {}),
  });
  const cache = plugin.informers.informer<CertificateRequest>(CertificateRequestKind);
  await until(
    () => {
      const request = cache.get(waiting.request, waiting.namespace);
      return request !== undefined && seen(request);
    },
    {
      what: `the node to see request ${waiting.request} as expected`,
      timeoutMs: 60_000,
      ...(signal ? { signal } : {}),
    },
  );
  // Every held deadline: the tests that use this have one publish in flight at a time.
  if (plugin.deadlines.expire() === 0)
    throw new Error(`${volumeId} waits, but no deadline is held: start the plugin with them held`);
  return waiting;
}
