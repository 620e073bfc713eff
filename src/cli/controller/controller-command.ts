import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { quoted } from '../../api/echoed-value.js';
import { PCR_MIN_EXPIRATION_SECONDS } from '../../api/pod-certificate-request.js';
import { checkLeaderElectionTiming } from '../../controller/leader-election.js';
import { trustDomainProblem } from '../../issuer/podcertificaterequests/pod-certificate-profile.js';
import { registerClientMetrics } from '../../observability/client-metrics.js';
import {
  informerMetricsSources,
  registerControllerMetrics,
} from '../../observability/controller-metrics.js';
import { createLogger, isLogLevel } from '../../observability/logger.js';
import { startObservability } from '../../observability/observability.js';
import { loadKubeConfig } from '../../store/kubernetes/kube-config.js';
import { parseFlags } from '../common/flag-table.js';
import { flagDuration, positiveInteger } from '../common/flag-values.js';
import { kubeClientFlags } from '../common/kube-flags.js';
import { observabilityAddresses } from '../common/observability-flags.js';
import { terminationSignal } from '../common/termination.js';
import { type Controller, startController } from './controller.js';
import { CONTROLLER_FLAGS, CONTROLLER_HELP } from './controller-flags.js';
import { controllerSelection } from './controller-names.js';

/**
 * `cert-csi controller`: the issuer stack against the cluster. With leader election (the
 * default) it campaigns for the Lease and works only while it holds it; losing the lease
 * ends the process (exit 1) so its Deployment restarts it as a fresh candidate.
 */
export async function runController(
  args: string[],
  until: () => Promise<unknown> = terminationSignal,
): Promise<number> {
  const { values } = parseFlags(CONTROLLER_FLAGS, args);
  if (values.help) {
    process.stdout.write(CONTROLLER_HELP);
    return 0;
  }
  const level = values['log-level'];
  if (!isLogLevel(level)) throw new Error(`--log-level: unknown level ${quoted(level ?? '')}`);
  const leaderElect = values['leader-elect'];
  if (leaderElect !== 'true' && leaderElect !== 'false') {
    throw new Error(`--leader-elect: expected true or false, got "${leaderElect}"`);
  }
  const timing = {
    leaseDurationMs: flagDuration(
      '--leader-election-lease-duration',
      values['leader-election-lease-duration'],
    ),
    renewDeadlineMs: flagDuration(
      '--leader-election-renew-deadline',
      values['leader-election-renew-deadline'],
    ),
    retryPeriodMs: flagDuration(
      '--leader-election-retry-period',
      values['leader-election-retry-period'],
    ),
  };
  checkLeaderElectionTiming(timing);
  const signingWorkers = positiveInteger('--signing-workers', values['signing-workers']);
  const trustDomain = values['trust-domain'];
  const trustDomainError = trustDomainProblem(trustDomain);
  if (trustDomainError) {
    throw new Error(`--trust-domain: ${quoted(trustDomain)} ${trustDomainError}`);
  }
  const podCertificateMaxDurationMs = flagDuration(
    '--pod-certificate-max-duration',
    values['pod-certificate-max-duration'],
  );
  if (podCertificateMaxDurationMs < PCR_MIN_EXPIRATION_SECONDS * 1000) {
    throw new Error(
      `--pod-certificate-max-duration: ${quoted(values['pod-certificate-max-duration'])} is shorter than 1h, the shortest pod certificate the API server accepts`,
    );
  }
  const enabled = controllerSelection(
    values.controllers,
    values['disable-approval'] ? ['-certificaterequests-approver'] : [],
  );
  const rate = kubeClientFlags(values);
  const served = observabilityAddresses(values);
  const logger = createLogger(level);
  const kubeConfig = loadKubeConfig({
    ...(values.kubeconfig ? { kubeconfig: values.kubeconfig } : {}),
    ...(values.context ? { context: values.context } : {}),
  });
  const identity = values.identity || `${hostname()}_${randomUUID().slice(0, 8)}`;
  const clusterResourceNamespace = values['cluster-resource-namespace'];
  // Before the controller: /readyz answers 503 while a leader's caches sync.
  let controller: Controller | undefined;
  const observability = await startObservability({
    ...served,
    collectors: [
      (metrics, onError) =>
        registerControllerMetrics(
          metrics,
          informerMetricsSources(() => controller?.informers()),
          onError,
        ),
      registerClientMetrics,
    ],
    checks: [{ name: 'controllers', ready: () => controller?.ready() ?? false }],
    logger,
  });
  // Listening before the line that says it started (see node-command.ts).
  const stopAsked = until();
  logger.info({ identity, leaderElect, clusterResourceNamespace }, 'cert-csi controller started');
  const running = startController({
    kubeConfig,
    ...rate,
    identity,
    clusterResourceNamespace,
    enabled,
    signingWorkers,
    trustDomain,
    podCertificateMaxDurationMs,
    logger,
    ...(leaderElect === 'true'
      ? {
          leaderElection: {
            namespace: values['leader-election-namespace'],
            name: values['leader-election-id'],
            ...timing,
          },
        }
      : {}),
  });
  controller = running;
  void stopAsked.then(() => running.stop());
  const outcome = await running.done;
  await observability.close();
  if (outcome === 'stopped') return 0;
  logger.error({ identity }, 'lost the leader-election lease: exiting');
  return 1;
}
