import { resolve } from 'node:path';
import { shortened } from '../../api/echoed-value.js';
import { type NamespacedName, parseNamespacedName } from '../../api/namespaced-name.js';
import { dnsLabelProblem } from '../../attributes/object-names.js';
import { errorMessage } from '../../base/error-message.js';
import {
  type CertificateStatusReport,
  readCertificateStatus,
} from '../../certificates/certificate-status-report.js';
import {
  type RequestAwaitingApproval,
  readRequestsAwaitingApproval,
} from '../../issuer/certificaterequests/awaiting-approval.js';
import type { ResourceStore } from '../../store/resource-store.js';
import { StateDirectoryReader } from '../../store/state-directory/state-directory-reader.js';
import { DataRoot } from '../../volume/data-root.js';
import {
  readVolumeStatuses,
  type VolumeStatus,
} from '../../volume-manager/control/volume-status.js';
import { type CommandOutput, processOutput } from '../common/command-output.js';
import { startCommand, usageError } from '../common/command-start.js';
import { isDirectory } from '../common/is-directory.js';
import { KUBE_CLIENT_FLAG_NAMES } from '../common/kube-flags.js';
import { issuerText, shorten } from '../common/table-cells.js';
import { terminationSignal } from '../common/termination.js';
import { formatCertificateStatus } from './certificate-status-text.js';
import { formatRequestsTable } from './requests-status-text.js';
import { STATUS_COMMAND, type StatusFlags } from './status-flags.js';
import { watchStatus } from './status-watch.js';

/**
 * Widest cell of each column, in characters; a longer value is shortened with "…" (--json has
 * it whole). VOLUME fits kubelet's csi-<sha256> ids (68); NOT AFTER and NEXT RENEWAL fit a
 * time, and cap what an unparsable stored value would take.
 */
const COLUMN_WIDTHS = [72, 48, 48, 20, 24, 24, 60] as const;

/** `cert-csi status`: the volumes of this node, from their files; or one Certificate. */
export async function runStatus(
  args: string[],
  out: CommandOutput = processOutput,
  /** Ends --watch; SIGINT or SIGTERM by default. */
  until: () => Promise<unknown> = terminationSignal,
): Promise<number> {
  const started = startCommand(args, out, STATUS_COMMAND);
  if (typeof started === 'number') return started;
  const { values, explicit } = started;
  if (values.certificate !== undefined || values.requests) {
    if (values.watch) return usageError(out, STATUS_COMMAND, '--watch: only used with --data-root');
    if (values.certificate !== undefined && values.requests) {
      return usageError(
        out,
        STATUS_COMMAND,
        '--certificate and --requests are two views: give one of them',
      );
    }
    return values.requests ? requestsStatus(started, out) : certificateStatus(started, out);
  }
  for (const flag of ['state-dir', 'namespace', ...KUBE_CLIENT_FLAG_NAMES]) {
    if (explicit.has(flag)) {
      return usageError(
        out,
        STATUS_COMMAND,
        flag === 'namespace'
          ? '--namespace: only used with --requests'
          : `--${flag}: only used with --certificate or --requests`,
      );
    }
  }
  const dataRoot = values['data-root'];
  if (!dataRoot) return usageError(out, STATUS_COMMAND, '--data-root is required');
  // Absolute, so every message names the same directory the plugin's logs do.
  const root = resolve(dataRoot);
  if (!(await isDirectory(root))) {
    return usageError(
      out,
      STATUS_COMMAND,
      `data root ${root} does not exist or is not a directory`,
    );
  }
  if (values.watch) return watchVolumes(root, values.json === true, out, until);
  const statuses = await readVolumeStatuses(new DataRoot(root), new Date(), (message) =>
    out.stderr.write(warningLine(message)),
  );
  if (values.json) {
    out.stdout.write(`${JSON.stringify(statuses, null, 2)}\n`);
  } else {
    out.stdout.write(volumesText(root, statuses));
  }
  return 0;
}

// A file status skipped, on stderr: the table (or JSON) on stdout stays as it is.
function warningLine(message: string): string {
  return `cert-csi status: warning: ${message}\n`;
}

function volumesText(root: string, statuses: readonly VolumeStatus[]): string {
  return statuses.length === 0 ? `no volumes in ${root}\n` : formatTable(statuses);
}

/**
 * `status --watch`: the table (or one JSON array per line), again each time it changes, until
 * interrupted. Text snapshots are headed by the time they were read.
 */
async function watchVolumes(
  root: string,
  json: boolean,
  out: CommandOutput,
  until: () => Promise<unknown>,
): Promise<number> {
  const stop = new AbortController();
  void until().then(() => stop.abort());
  const dataRoot = new DataRoot(root);
  // The skipped files, printed again only when they change: not at each refresh.
  let lastWarnings = '';
  await watchStatus({
    root,
    render: async () => {
      const warnings: string[] = [];
      const statuses = await readVolumeStatuses(dataRoot, new Date(), (message) =>
        warnings.push(warningLine(message)),
      );
      const text = warnings.join('');
      if (text !== lastWarnings) out.stderr.write(text);
      lastWarnings = text;
      return json ? `${JSON.stringify(statuses)}\n` : volumesText(root, statuses);
    },
    print: (snapshot) =>
      out.stdout.write(json ? snapshot : `${timeText(new Date().toISOString())}\n${snapshot}\n`),
    fail: (message) => out.stderr.write(`cert-csi status: ${message}\n`),
    signal: stop.signal,
  });
  return 0;
}

/** `status --certificate`: from the embedded plugin's state dir, or from a cluster. */
async function certificateStatus(flags: StatusFlags, out: CommandOutput): Promise<number> {
  const { values, explicit } = flags;
  let ref: NamespacedName;
  try {
    ref = parseNamespacedName(values.certificate ?? '');
  } catch (err) {
    return usageError(out, STATUS_COMMAND, `--certificate: ${errorMessage(err)}`);
  }
  if (explicit.has('namespace')) {
    return usageError(out, STATUS_COMMAND, '--namespace: only used with --requests');
  }
  const store = await sourceStore(flags, out, { flag: '--certificate', what: 'a Certificate' });
  if (typeof store === 'number') return store;
  let report: CertificateStatusReport;
  try {
    report = await readCertificateStatus(store, ref);
  } catch (err) {
    out.stderr.write(`cert-csi status: ${errorMessage(err)}\n`);
    return 1;
  }
  out.stdout.write(
    values.json ? `${JSON.stringify(report, null, 2)}\n` : formatCertificateStatus(report),
  );
  return 0;
}

/** `status --requests`: the CertificateRequests no approver has decided on yet. */
async function requestsStatus(flags: StatusFlags, out: CommandOutput): Promise<number> {
  const { values } = flags;
  const namespace = values.namespace;
  if (namespace !== undefined) {
    const problem = dnsLabelProblem(namespace);
    if (problem !== undefined) {
      return usageError(out, STATUS_COMMAND, `--namespace: ${shortened(namespace)}: ${problem}`);
    }
  }
  const store = await sourceStore(flags, out, {
    flag: '--requests',
    what: 'the CertificateRequests',
  });
  if (typeof store === 'number') return store;
  let rows: RequestAwaitingApproval[];
  try {
    rows = await readRequestsAwaitingApproval(store, namespace);
  } catch (err) {
    out.stderr.write(`cert-csi status: cannot list CertificateRequests: ${errorMessage(err)}\n`);
    return 1;
  }
  const where = namespace === undefined ? 'any namespace' : `namespace ${namespace}`;
  out.stdout.write(
    values.json ? `${JSON.stringify(rows, null, 2)}\n` : formatRequestsTable(rows, where),
  );
  return 0;
}

/**
 * Where a view of objects reads them: the embedded plugin's --state-dir (read-only, without
 * its lock) or the cluster of --kubeconfig/--context. A usage error's exit status otherwise.
 */
async function sourceStore(
  { values, explicit }: StatusFlags,
  out: CommandOutput,
  view: { flag: string; what: string },
): Promise<Pick<ResourceStore, 'get' | 'list'> | number> {
  if (values['data-root'] !== undefined) {
    return usageError(
      out,
      STATUS_COMMAND,
      `--data-root lists volumes: with ${view.flag} give --state-dir DIR (embedded plugin) or --kubeconfig FILE (cluster)`,
    );
  }
  const inCluster = values.kubeconfig !== undefined || values.context !== undefined;
  const stateDir = values['state-dir'];
  if (inCluster) {
    if (stateDir !== undefined) {
      return usageError(
        out,
        STATUS_COMMAND,
        '--state-dir and --kubeconfig/--context name two places: give --state-dir for an embedded plugin, --kubeconfig (or --context) for a cluster',
      );
    }
    try {
      // client-node costs ~0.6 s to load: only the cluster form pays for it.
      return (await import('../common/cluster-store.js')).clusterStore(values);
    } catch (err) {
      return usageError(out, STATUS_COMMAND, errorMessage(err));
    }
  }
  if (stateDir === undefined) {
    return usageError(
      out,
      STATUS_COMMAND,
      `${view.flag} needs --state-dir DIR (${view.what} of the embedded plugin) or --kubeconfig FILE (${view.what} in a cluster)`,
    );
  }
  for (const flag of KUBE_CLIENT_FLAG_NAMES) {
    if (explicit.has(flag)) {
      return usageError(out, STATUS_COMMAND, `--${flag}: only used with --kubeconfig or --context`);
    }
  }
  const dir = resolve(stateDir);
  if (!(await isDirectory(dir))) {
    return usageError(out, STATUS_COMMAND, `state dir ${dir} does not exist or is not a directory`);
  }
  return new StateDirectoryReader(dir);
}

/** The status rows as an aligned text table, one line per volume. */
export function formatTable(statuses: readonly VolumeStatus[]): string {
  const header = ['VOLUME', 'POD', 'ISSUER', 'STATE', 'NOT AFTER', 'NEXT RENEWAL', 'LAST ERROR'];
  const rows = statuses
    .map((s) => [
      s.volumeId,
      s.pod ? `${s.pod.namespace}/${s.pod.name}` : '-',
      s.issuer ? issuerText(s.issuer) : '-',
      // pending and failing already say a renewal is coming; for the other states it is news.
      s.renewalPending && s.state !== 'pending' && s.state !== 'failing'
        ? `${s.state}+pending`
        : s.state,
      timeText(s.notAfter),
      timeText(s.nextRenewal),
      s.lastError?.message ?? s.detail ?? '-',
    ])
    .map((cells) => cells.map((c, i) => shorten(c, COLUMN_WIDTHS[i] ?? 0)));
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return `${[header, ...rows].map(line).join('\n')}\n`;
}

// Seconds are enough in a table; --json keeps the stored text.
function timeText(time: string | undefined): string {
  if (time === undefined) return '-';
  const ms = Date.parse(time);
  return Number.isNaN(ms) ? time : new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
