import { Counter, Gauge, type Registry } from 'prom-client';
import { type Certificate, CertificateKind } from '../api/certificate.js';
import { ClusterIssuerKind, type Issuer, IssuerKind } from '../api/issuer.js';
import { subscribeFacts } from '../base/telemetry.js';
import type { SharedInformers } from '../controller/shared-informers.js';
import { CONDITION_STATUSES, readyStatusOf, unixSeconds } from './ready-condition.js';

/** What the controller's families are computed from: the informer caches, [] when not running. */
export interface ControllerMetricsSources {
  certificates(): readonly Certificate[];
  issuers(): readonly Issuer[];
  clusterIssuers(): readonly Issuer[];
}

/** The sources of a process's informers, while it runs them (undefined otherwise: no series). */
export function informerMetricsSources(
  informers: () => SharedInformers | undefined,
): ControllerMetricsSources {
  return {
    certificates: () => informers()?.cached<Certificate>(CertificateKind) ?? [],
    issuers: () => informers()?.cached<Issuer>(IssuerKind) ?? [],
    clusterIssuers: () => informers()?.cached<Issuer>(ClusterIssuerKind) ?? [],
  };
}

const CERTIFICATE_LABELS = [
  'name',
  'namespace',
  'issuer_name',
  'issuer_kind',
  'issuer_group',
] as const;

/** A Certificate family of one timestamp of its status. */
const CERTIFICATE_TIMESTAMPS = [
  {
    name: 'certmanager_certificate_expiration_timestamp_seconds',
    help: 'The timestamp after which the certificate expires, expressed in Unix Epoch Time.',
    field: 'notAfter',
  },
  {
    name: 'certmanager_certificate_not_after_timestamp_seconds',
    help: 'The timestamp after which the certificate is invalid, expressed as a Unix Epoch Time.',
    field: 'notAfter',
  },
  {
    name: 'certmanager_certificate_not_before_timestamp_seconds',
    help: 'The timestamp before which the certificate is invalid, expressed as a Unix Epoch Time.',
    field: 'notBefore',
  },
  {
    name: 'certmanager_certificate_renewal_timestamp_seconds',
    help: 'The timestamp after which the certificate should be renewed, expressed in Unix Epoch Time.',
    field: 'renewalTime',
  },
] as const;

/**
 * cert-manager's controller families: the Certificate, Issuer and ClusterIssuer ones computed
 * at scrape time from the informer caches, and the sync counters per controller fed by the
 * controller runtime's `sync` facts. Returns the unsubscription.
 */
export function registerControllerMetrics(
  registry: Registry,
  sources: ControllerMetricsSources,
  onError: (err: unknown) => void,
): () => void {
  const registers = [registry];
  new Gauge({
    name: 'certmanager_certificate_ready_status',
    help: 'The ready status of the certificate.',
    labelNames: ['name', 'namespace', 'condition', 'issuer_name', 'issuer_kind', 'issuer_group'],
    registers,
    collect() {
      this.reset();
      for (const certificate of sources.certificates()) {
        const status = readyStatusOf(certificate.status?.conditions);
        for (const condition of CONDITION_STATUSES) {
          this.set({ ...certificateLabels(certificate), condition }, status === condition ? 1 : 0);
        }
      }
    },
  });
  for (const family of CERTIFICATE_TIMESTAMPS) {
    new Gauge({
      name: family.name,
      help: family.help,
      labelNames: CERTIFICATE_LABELS,
      registers,
      collect() {
        this.reset();
        for (const certificate of sources.certificates()) {
          this.set(certificateLabels(certificate), unixSeconds(certificate.status?.[family.field]));
        }
      },
    });
  }
  new Gauge({
    name: 'certmanager_issuer_ready_status',
    help: 'The ready status of the Issuer.',
    labelNames: ['name', 'namespace', 'condition'],
    registers,
    collect() {
      this.reset();
      for (const issuer of sources.issuers()) {
        const status = readyStatusOf(issuer.status?.conditions);
        for (const condition of CONDITION_STATUSES) {
          this.set(
            { name: issuer.metadata.name, namespace: issuer.metadata.namespace ?? '', condition },
            status === condition ? 1 : 0,
          );
        }
      }
    },
  });
  new Gauge({
    name: 'certmanager_clusterissuer_ready_status',
    help: 'The ready status of the ClusterIssuer.',
    labelNames: ['name', 'condition'],
    registers,
    collect() {
      this.reset();
      for (const issuer of sources.clusterIssuers()) {
        const status = readyStatusOf(issuer.status?.conditions);
        for (const condition of CONDITION_STATUSES) {
          this.set({ name: issuer.metadata.name, condition }, status === condition ? 1 : 0);
        }
      }
    },
  });
  const syncCalls = new Counter({
    name: 'certmanager_controller_sync_call_count',
    help: 'The number of sync() calls made by a controller.',
    labelNames: ['controller'],
    registers,
  });
  const syncErrors = new Counter({
    name: 'certmanager_controller_sync_error_count',
    help: 'The number of errors encountered during controller sync().',
    labelNames: ['controller'],
    registers,
  });
  return subscribeFacts(
    'sync',
    (fact) => {
      syncCalls.inc({ controller: fact.controller });
      if (fact.error) syncErrors.inc({ controller: fact.controller });
    },
    onError,
  );
}

/** The labels of a Certificate's families: the raw spec.issuerRef values, as cert-manager. */
function certificateLabels(
  certificate: Certificate,
): Record<(typeof CERTIFICATE_LABELS)[number], string> {
  const ref = certificate.spec.issuerRef;
  return {
    name: certificate.metadata.name,
    namespace: certificate.metadata.namespace ?? '',
    issuer_name: ref.name,
    issuer_kind: ref.kind ?? '',
    issuer_group: ref.group ?? '',
  };
}
