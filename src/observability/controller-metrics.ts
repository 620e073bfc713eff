import { type Certificate, CertificateKind } from '../api/certificate.js';
import { ClusterIssuerKind, type Issuer, IssuerKind } from '../api/issuer.js';
import { subscribeFacts } from '../base/telemetry.js';
import type { SharedInformers } from '../controller/shared-informers.js';
import { type ComponentMetrics, labelText } from './component-metrics.js';
import { issuerRefLabels } from './issuer-ref-labels.js';
import { promClient } from './prom-client.js';
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
  metrics: ComponentMetrics,
  sources: ControllerMetricsSources,
  onError: (err: unknown) => void,
): () => void {
  const registers = [metrics.registry];
  const certificates = metrics.perScrape(() => sources.certificates());
  metrics.addScrapeFamily({
    name: 'certmanager_certificate_ready_status',
    help: 'The ready status of the certificate.',
    type: 'gauge',
    collect(out) {
      for (const certificate of certificates()) {
        const status = readyStatusOf(certificate.status?.conditions);
        const labels = issuerRefLabels(certificate);
        for (const condition of CONDITION_STATUSES) {
          out.series(`${labels},condition="${condition}"`, status === condition ? 1 : 0);
        }
      }
    },
  });
  for (const family of CERTIFICATE_TIMESTAMPS) {
    metrics.addScrapeFamily({
      name: family.name,
      help: family.help,
      type: 'gauge',
      collect(out) {
        for (const certificate of certificates()) {
          out.series(issuerRefLabels(certificate), unixSeconds(certificate.status?.[family.field]));
        }
      },
    });
  }
  metrics.addScrapeFamily({
    name: 'certmanager_issuer_ready_status',
    help: 'The ready status of the Issuer.',
    type: 'gauge',
    collect(out) {
      for (const issuer of sources.issuers()) {
        const status = readyStatusOf(issuer.status?.conditions);
        const labels = labelText({
          name: issuer.metadata.name,
          namespace: issuer.metadata.namespace as string,
        });
        for (const condition of CONDITION_STATUSES) {
          out.series(`${labels},condition="${condition}"`, status === condition ? 1 : 0);
        }
      }
    },
  });
  metrics.addScrapeFamily({
    name: 'certmanager_clusterissuer_ready_status',
    help: 'The ready status of the ClusterIssuer.',
    type: 'gauge',
    collect(out) {
      for (const issuer of sources.clusterIssuers()) {
        const status = readyStatusOf(issuer.status?.conditions);
        const labels = labelText({ name: issuer.metadata.name });
        for (const condition of CONDITION_STATUSES) {
          out.series(`${labels},condition="${condition}"`, status === condition ? 1 : 0);
        }
      }
    },
  });
  const { Counter } = promClient();
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
