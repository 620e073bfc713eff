import type { CertificateRequest } from '../api/certificate-request.js';
import { hashIdentifier, NODE_ID_HASH_LABEL, VOLUME_ID_HASH_LABEL } from '../api/labels.js';
import { ISSUANCE_FAILURE_REASONS, subscribeFacts } from '../base/telemetry.js';
import { type ComponentMetrics, labelText, seriesLine } from './component-metrics.js';
import { issuerRefLabels } from './issuer-ref-labels.js';
import { ManagedVolumes } from './managed-volumes.js';
import { promClient } from './prom-client.js';
import { CONDITION_STATUSES, readyStatusOf } from './ready-condition.js';
import { requestExpirySeconds } from './request-expiry.js';

/** What the node's families are computed from. */
export interface NodeMetricsSources {
  nodeId: string;
  /** The CertificateRequests the process has cached (its informer); [] before it runs. */
  requests(): readonly CertificateRequest[];
}

/** Buckets of the issuance duration: a local signer answers in ms, an approval can take minutes. */
export const ISSUANCE_DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/**
 * csi-lib's `certmanager_csi_*` families for one node, plus the issuance duration and the
 * failures by reason. Counters follow the volume manager's facts; the request families are
 * computed at scrape time from the request informer's cache and the managed volumes kept in
 * memory. The `volume` label of csi-lib's counters is dropped (per-node totals): a volume id
 * per series would grow without bound as pods come and go. Returns the unsubscription.
 */
export function registerNodeMetrics(
  metrics: ComponentMetrics,
  sources: NodeMetricsSources,
  onError: (err: unknown) => void,
): () => void {
  const node = hashIdentifier(sources.nodeId);
  const volumes = new ManagedVolumes(sources.nodeId);
  const ownRequests = metrics.perScrape(() =>
    sources.requests().filter((request) => request.metadata.labels?.[NODE_ID_HASH_LABEL] === node),
  );
  const registers = [metrics.registry];
  const { Counter, Histogram } = promClient();

  const issueRequests = new Counter({
    name: 'certmanager_csi_issue_requests_total',
    help: 'The number of issue() calls made by the driver.',
    labelNames: ['node'],
    registers,
  });
  const issueErrors = new Counter({
    name: 'certmanager_csi_issue_errors_total',
    help: 'The number of errors encountered during the driver issue() calls.',
    labelNames: ['node'],
    registers,
  });
  const failures = new Counter({
    name: 'certmanager_csi_issue_failures_total',
    help: 'The number of failed issue() calls, by reason.',
    labelNames: ['node', 'reason'],
    registers,
  });
  const duration = new Histogram({
    name: 'certmanager_csi_issue_duration_seconds',
    help: 'How long issue() calls took, from the start to a written certificate or a failure.',
    labelNames: ['node', 'outcome'],
    buckets: ISSUANCE_DURATION_BUCKETS,
    registers,
  });
  // Present from the first scrape, so a rate() has a zero to start from.
  issueRequests.inc({ node }, 0);
  issueErrors.inc({ node }, 0);
  for (const reason of ISSUANCE_FAILURE_REASONS) failures.inc({ node, reason }, 0);

  metrics.addScrapeFamily({
    name: READY_STATUS,
    help: 'The ready status of the certificate request.',
    type: 'gauge',
    collect(out) {
      for (const request of ownRequests()) out.lines(readyLines(request));
    },
  });
  metrics.addScrapeFamily({
    name: 'certmanager_csi_certificate_request_expiration_timestamp_seconds',
    help: 'The timestamp after which the certificate request expires, expressed in Unix Epoch Time.',
    type: 'gauge',
    collect(out) {
      for (const request of ownRequests()) {
        const expiry = requestExpirySeconds(request);
        if (expiry !== undefined) out.series(issuerRefLabels(request), expiry);
      }
    },
  });
  metrics.addScrapeFamily({
    name: 'certmanager_csi_certificate_request_renewal_timestamp_seconds',
    help: 'The timestamp after which the certificate request should be renewed, expressed in Unix Epoch Time.',
    type: 'gauge',
    collect(out) {
      const renewals = volumes.renewalByVolumeHash();
      for (const request of ownRequests()) {
        const volumeHash = request.metadata.labels?.[VOLUME_ID_HASH_LABEL];
        out.series(issuerRefLabels(request), (volumeHash && renewals.get(volumeHash)) || 0);
      }
    },
  });
  const reloads = new Counter({
    name: 'cert_csi_reload_notifications_total',
    help: 'Reload notifications after a volume rewrite (reload-url, reload-signal), by mechanism and outcome.',
    labelNames: ['node', 'mechanism', 'outcome'],
    registers,
  });
  const kept = new Counter({
    name: 'cert_csi_reissues_avoided_total',
    help: 'Volumes whose first publish since the plugin started mounted the usable certificate on disk instead of issuing a new one (after a restart, or a reboot with the data root on disk).',
    labelNames: ['node'],
    registers,
  });
  kept.inc({ node }, 0);
  const nodeLabel = labelText({ node });
  metrics.addScrapeFamily({
    name: 'certmanager_csi_managed_volume_count',
    help: 'The number of managed volumes by the csi driver.',
    type: 'gauge',
    collect(out) {
      out.series(nodeLabel, volumes.count());
    },
  });
  metrics.addScrapeFamily({
    name: 'certmanager_csi_managed_certificate_request_count',
    help: 'The number of managed certificate requests by the csi driver.',
    type: 'gauge',
    collect(out) {
      out.series(nodeLabel, ownRequests().length);
    },
  });

  const unsubscribe = [
    subscribeFacts(
      'issuance',
      (fact) => {
        if (fact.nodeId !== sources.nodeId) return;
        volumes.observe(fact);
        if (fact.phase === 'started') {
          issueRequests.inc({ node });
        } else if (fact.phase === 'succeeded') {
          duration.observe({ node, outcome: 'success' }, fact.durationSeconds);
        } else {
          issueErrors.inc({ node });
          failures.inc({ node, reason: fact.reason });
          duration.observe({ node, outcome: 'failure' }, fact.durationSeconds);
        }
      },
      onError,
    ),
    subscribeFacts(
      'volume',
      (fact) => {
        volumes.observe(fact);
        if (fact.change === 'kept' && fact.nodeId === sources.nodeId) kept.inc({ node });
      },
      onError,
    ),
    subscribeFacts(
      'reload',
      (fact) => {
        if (fact.nodeId !== sources.nodeId) return;
        reloads.inc({ node, mechanism: fact.mechanism, outcome: fact.outcome });
      },
      onError,
    ),
  ];
  return () => {
    for (const stop of unsubscribe) stop();
  };
}

// The informer replaces a cached object on every change: what a scrape writes of one object
// is built once, the first time it is scraped (at 2,000 requests this halves a scrape).
const readyLinesOfRequest = new WeakMap<CertificateRequest, string>();
const READY_STATUS = 'certmanager_csi_certificate_request_ready_status';

/** A request's three ready-status lines: 1 for its Ready status, 0 for the others. */
function readyLines(request: CertificateRequest): string {
  let text = readyLinesOfRequest.get(request);
  if (text === undefined) {
    const status = readyStatusOf(request.status?.conditions);
    const labels = issuerRefLabels(request);
    text = CONDITION_STATUSES.map((condition) =>
      seriesLine(READY_STATUS, `${labels},condition="${condition}"`, status === condition ? 1 : 0),
    ).join('\n');
    readyLinesOfRequest.set(request, text);
  }
  return text;
}
