import type { Test } from 'tap';
import {
  type CertificateRequest,
  CertificateRequestKind,
  decodeBytes,
} from '../../src/api/certificate-request.js';
import { findCondition } from '../../src/api/conditions.js';
import type { Issuer } from '../../src/api/issuer.js';
import { ClusterIssuerKind, IssuerKind } from '../../src/api/issuer.js';
import type { Logger } from '../../src/api/logger.js';
import type { RunningControllers } from '../../src/controller/controller-manager.js';
import { startControllers } from '../../src/controller/controller-manager.js';
import { MemoryEventRecorder } from '../../src/controller/memory-event-recorder.js';
import { issuerControllers } from '../../src/issuer/controllers.js';
import { type IssuerStackConfig, issuerStackConfig } from '../../src/issuer/stack-config.js';
import type { AdmissionHook } from '../../src/store/admission.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import type { ResourceStore } from '../../src/store/resource-store.js';
import { waitForObject } from './wait-for-object.js';

/** A memory store with the controller stack running on it, stopped when the test ends. */
export interface StackHarness {
  store: MemoryStore;
  controllers: RunningControllers;
  events: MemoryEventRecorder;
  /** Waits until the request's Ready condition has the given reason. */
  readyReason(namespace: string, name: string, reason: string): Promise<CertificateRequest>;
  /** Waits until the issuer's Ready condition has the given reason. */
  issuerReason(namespace: string | undefined, name: string, reason: string): Promise<Issuer>;
  /** Waits until predicate holds for the request. */
  request(
    namespace: string,
    name: string,
    predicate: (cr: CertificateRequest) => boolean,
  ): Promise<CertificateRequest>;
}

/** The names of every issuer controller but these. */
export function allControllersExcept(...names: string[]): Set<string> {
  return new Set(issuerControllers.map((c) => c.name).filter((name) => !names.includes(name)));
}

/** Starts a stack for one test. */
export async function startHarness(
  t: Test,
  options: Partial<IssuerStackConfig> & {
    /** Wraps the store the controllers see, e.g. to inject faults. */
    wrap?: (store: MemoryStore) => ResourceStore;
    /** The controllers to run, by name; every issuer controller when absent. */
    enabled?: ReadonlySet<string>;
    logger?: Logger;
    /** The store's admission (embedded mode's, to have every write checked). */
    admit?: AdmissionHook;
  } = {},
): Promise<StackHarness> {
  const { wrap, enabled, logger, admit, ...config } = options;
  const store = new MemoryStore(admit ? { admit } : {});
  const events = new MemoryEventRecorder();
  const stack = await startControllers({
    store: wrap ? wrap(store) : store,
    controllers: issuerControllers,
    ...(enabled ? { enabled } : {}),
    config: issuerStackConfig(config),
    events,
    ...(logger ? { logger } : {}),
    retry: { baseDelayMs: 20 },
  });
  t.teardown(async () => {
    await stack.stop();
    await store.close();
  });
  return {
    store,
    controllers: stack,
    events,
    readyReason: (namespace, name, reason) =>
      waitForObject<CertificateRequest>(
        store,
        CertificateRequestKind,
        name,
        namespace,
        (cr) => findCondition(cr.status?.conditions, 'Ready')?.reason === reason,
      ),
    issuerReason: (namespace, name, reason) =>
      waitForObject<Issuer>(
        store,
        namespace ? IssuerKind : ClusterIssuerKind,
        name,
        namespace,
        (issuer) => findCondition(issuer.status?.conditions, 'Ready')?.reason === reason,
      ),
    request: (namespace, name, predicate) =>
      waitForObject<CertificateRequest>(store, CertificateRequestKind, name, namespace, predicate),
  };
}

/** The issued chain and CA of a request, decoded. */
export function issuedPem(cr: CertificateRequest): { certificate: string; ca: string } {
  return {
    certificate: decodeBytes(cr.status?.certificate) ?? '',
    ca: decodeBytes(cr.status?.ca) ?? '',
  };
}
