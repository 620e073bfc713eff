import type { Test } from 'tap';
import {
  type Certificate,
  CertificateKind,
  type CertificateSpec,
} from '../../src/api/certificate.js';
import { findCondition, isConditionTrue } from '../../src/api/conditions.js';
import { ClusterIssuerKind } from '../../src/api/issuer.js';
import type { Logger } from '../../src/api/logger.js';
import { type Secret, SecretKind, secretValue } from '../../src/api/secret.js';
import type { Clock } from '../../src/base/clock.js';
import {
  type StackConfig,
  stackConfig,
  stackControllers,
} from '../../src/cli/controller/stack-controllers.js';
import {
  type RunningControllers,
  startControllers,
} from '../../src/controller/controller-manager.js';
import { MemoryEventRecorder } from '../../src/controller/memory-event-recorder.js';
import { isStoreError } from '../../src/store/errors.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import type { ResourceStore } from '../../src/store/resource-store.js';
import { clusterIssuer, tlsSecret, withSpec } from './builders/index.js';
import { makeCA } from './issuer-fixtures.js';
import { waitForObject } from './wait-for-object.js';

/** Generous: RSA keys and signatures on a loaded 2-core machine; a passing test never waits it out. */
export const CERTIFICATE_WAIT_MS = 60_000;

/** A memory store with every controller of the stack (issuers and Certificates) running on it. */
export interface CertificateStack {
  store: MemoryStore;
  events: MemoryEventRecorder;
  controllers: RunningControllers;
  /** Waits until predicate holds for the Certificate. */
  certificate(
    namespace: string,
    name: string,
    predicate: (certificate: Certificate) => boolean,
  ): Promise<Certificate>;
  /** Waits until the Certificate is Ready=True, not issuing, its next key gone, at revision (default: any). */
  ready(namespace: string, name: string, revision?: number): Promise<Certificate>;
  /** The Secret, which must exist. */
  secret(namespace: string, name: string): Promise<Secret>;
}

/** Starts the whole stack for one test (controller retries in milliseconds). */
export async function startCertificateStack(
  t: Test,
  options: {
    clock?: Clock;
    config?: Partial<StackConfig>;
    enabled?: ReadonlySet<string>;
    logger?: Logger;
  } = {},
): Promise<CertificateStack> {
  const store = new MemoryStore();
  const events = new MemoryEventRecorder();
  const controllers = await startControllers({
    store,
    controllers: stackControllers,
    config: stackConfig(options.config),
    events,
    ...(options.enabled ? { enabled: options.enabled } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    retry: { baseDelayMs: 20, maxDelayMs: 500 },
  });
  t.teardown(async () => {
    await controllers.stop();
    await store.close();
  });
  const certificate = (
    namespace: string,
    name: string,
    predicate: (certificate: Certificate) => boolean,
  ) =>
    waitForObject<Certificate>(
      store,
      CertificateKind,
      name,
      namespace,
      predicate,
      CERTIFICATE_WAIT_MS,
    );
  return {
    store,
    events,
    controllers,
    certificate,
    ready: (namespace, name, revision) =>
      certificate(
        namespace,
        name,
        (c) =>
          isConditionTrue(c.status?.conditions, 'Ready') &&
          !isConditionTrue(c.status?.conditions, 'Issuing') &&
          c.status?.nextPrivateKeySecretName === undefined &&
          (revision === undefined || c.status?.revision === revision),
      ),
    secret: (namespace, name) => store.get<Secret>(SecretKind, name, namespace),
  };
}

/** Creates a CA ClusterIssuer `name` with a fresh ECDSA CA in kube-system; returns the CA PEM. */
export async function createCaClusterIssuer(store: ResourceStore, name = 'ca'): Promise<string> {
  const ca = await makeCA();
  await store.create(
    SecretKind,
    tlsSecret('kube-system', `${name}-key-pair`, {
      'tls.crt': ca.certificatePem,
      'tls.key': ca.keyPem,
    }),
  );
  await store.create(
    ClusterIssuerKind,
    clusterIssuer(name, withSpec({ ca: { secretName: `${name}-key-pair` } })),
  );
  return ca.certificatePem;
}

/** A Certificate in namespace with spec (secretName defaults to `<name>-tls`, issuer to ClusterIssuer `ca`). */
export function certificateObject(
  namespace: string,
  name: string,
  spec: Partial<CertificateSpec> = {},
): Certificate {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name, namespace },
    spec: {
      secretName: `${name}-tls`,
      issuerRef: { name: 'ca', kind: 'ClusterIssuer' },
      ...spec,
    },
  };
}

/** The Issuing or Ready condition's reason. */
export function conditionReason(certificate: Certificate, type: string): string | undefined {
  return findCondition(certificate.status?.conditions, type)?.reason;
}

/** A Secret's value, which must be there. */
export function secretText(secret: Secret, key: string): string {
  const value = secretValue(secret, key);
  if (value === undefined) throw new Error(`Secret ${secret.metadata.name} has no ${key}`);
  return value;
}

/** Changes a Certificate (spec or metadata) on a fresh read, again on a conflict with the controllers. */
export async function updateCertificate(
  store: ResourceStore,
  namespace: string,
  name: string,
  change: (certificate: Certificate) => Certificate,
  write: 'update' | 'updateStatus' = 'update',
): Promise<Certificate> {
  for (;;) {
    const current = await store.get<Certificate>(CertificateKind, name, namespace);
    try {
      return await store[write](CertificateKind, change(current));
    } catch (err) {
      if (!isStoreError(err, 'Conflict')) throw err;
    }
  }
}
