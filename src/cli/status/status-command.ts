import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
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
import {
  type CommandOutput,
  isDirectory,
  processOutput,
  startCommand,
  usageError,
} from '../common/data-root-command.js';
import { KUBE_CLIENT_HELP, KUBE_CLIENT_OPTIONS } from '../common/kube-flags.js';
import { issuerText, shorten } from '../common/table-cells.js';
import { terminationSignal } from '../common/termination.js';
import { formatCertificateStatus } from './certificate-status-text.js';
import { formatRequestsTable } from './requests-status-text.js';
import { watchStatus } from './status-watch.js';

export const STATUS_HELP = `Usage: cert-csi status --data-root DIR [--watch] [--json]
       cert-csi status --certificate NAMESPACE/NAME --state-dir DIR [--json]
       cert-csi status --certificate NAMESPACE/NAME --kubeconfig FILE [--context NAME] [--json]
       cert-csi status --requests [-n NAMESPACE] (--state-dir DIR | --kubeconfig FILE) [--json]

Lists the volumes of this node: volume id, pod, issuer, state, certificate expiry,
next renewal and last error. It reads the files under the data root, so it works
whether the plugin runs or not; a running plugin adds, through <data-root>/..control.sock,
the last errors it could not write to metadata.json (a full data root).

Long values are shortened with "…" to keep each row to one readable line; --json has
them whole.

With --watch (-w), prints the table, then again each time it changes, until interrupted
(Ctrl-C): volumes published or removed, metadata.json rewritten (an issuance, a renewal, a
failure). Each table is headed by the time it was read; with --json, each is one JSON
array on one line. Woken by file events in the data root and its volume dirs, and read
again at least every 5 s for what no file announces (a failure the plugin holds in memory,
a certificate that expires).

States: ok; pending (an issuance or renewal is in flight or asked for); failing
(attempts fail and no valid certificate is served); expired; corrupt (metadata.json
unreadable, or moved aside by the plugin as metadata.json.corrupt-*); incomplete
(a volume dir without metadata); waiting (published without a new certificate until
its pod passes the readiness gates or has the IP its SANs use; the reason is shown).

With --certificate, shows a cert-manager Certificate as "cmctl status certificate"
does: name and namespace, conditions (type, status, reason, message), DNS names, the
issuer it names, its Secret (name, the issuer annotations, the certificate's subject,
issuer, serial, key, names and validity, whether tls.key matches it, ca.crt), not
before, not after, renewal time, revision, the current and the next CertificateRequest
(those it controls, annotated with revision and revision+1) with their conditions, and
the last failure (time, failed attempts). --json prints the same as one JSON object.
  with --state-dir DIR: a Certificate of the embedded plugin (cert-csi node without a
    cluster), read from the files of its --state-dir, read-only and without its lock,
    so it works whether the plugin runs or not.
  with --kubeconfig FILE or --context NAME: a Certificate in that cluster.

With --requests, lists the CertificateRequests waiting for approval (neither an Approved
nor a Denied condition): namespace, name, issuer, requester (spec.username, who created
it) and age, oldest first; every namespace, or the one of --namespace. From the embedded
plugin's --state-dir (read-only) or a cluster (--kubeconfig/--context), as --certificate.

Exit codes: 0 shown; 1 the Certificate does not exist or could not be read, or the
requests could not be listed; 2 bad flags (a malformed NAMESPACE/NAME, an unusable
kubeconfig, a missing directory).

Flags:
  --data-root DIR                the plugin's --data-root (volumes)
  -w, --watch                    with --data-root: print again as volumes change
  --certificate NAMESPACE/NAME   show this Certificate instead of the volumes
  --state-dir DIR                the embedded plugin's --state-dir (with --certificate, --requests)
  --requests                     list the CertificateRequests waiting for approval
  -n, --namespace NAMESPACE      with --requests: only this namespace
  --json                         print JSON instead of text
  -h, --help                     show this help

Cluster, with --certificate or --requests:
${KUBE_CLIENT_HELP}`;

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
  const started = startCommand(args, out, statusCommand);
  if (typeof started === 'number') return started;
  const { values } = started;
  if (values.certificate !== undefined || values.requests) {
    if (values.watch) return usageError(out, statusCommand, '--watch: only used with --data-root');
    if (values.certificate !== undefined && values.requests) {
      return usageError(
        out,
        statusCommand,
        '--certificate and --requests are two views: give one of them',
      );
    }
    return values.requests ? requestsStatus(values, out) : certificateStatus(values, out);
  }
  for (const flag of ['state-dir', 'namespace', ...Object.keys(KUBE_CLIENT_OPTIONS)]) {
    if (values.explicit.has(flag)) {
      return usageError(
        out,
        statusCommand,
        flag === 'namespace'
          ? '--namespace: only used with --requests'
          : `--${flag}: only used with --certificate or --requests`,
      );
    }
  }
  const dataRoot = values['data-root'];
  if (!dataRoot) return usageError(out, statusCommand, '--data-root is required');
  // Absolute, so every message names the same directory the plugin's logs do.
  const root = resolve(dataRoot);
  if (!(await isDirectory(root))) {
    return usageError(out, statusCommand, `data root ${root} does not exist or is not a directory`);
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

type StatusFlags = ReturnType<typeof parseFlags>;

/** `status --certificate`: from the embedded plugin's state dir, or from a cluster. */
async function certificateStatus(values: StatusFlags, out: CommandOutput): Promise<number> {
  let ref: NamespacedName;
  try {
    ref = parseNamespacedName(values.certificate ?? '');
  } catch (err) {
    return usageError(out, statusCommand, `--certificate: ${errorMessage(err)}`);
  }
  if (values.explicit.has('namespace')) {
    return usageError(out, statusCommand, '--namespace: only used with --requests');
  }
  const store = await sourceStore(values, out, { flag: '--certificate', what: 'a Certificate' });
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
async function requestsStatus(values: StatusFlags, out: CommandOutput): Promise<number> {
  const namespace = values.namespace;
  if (namespace !== undefined) {
    const problem = dnsLabelProblem(namespace);
    if (problem !== undefined) {
      return usageError(out, statusCommand, `--namespace: ${shortened(namespace)}: ${problem}`);
    }
  }
  const store = await sourceStore(values, out, {
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
  values: StatusFlags,
  out: CommandOutput,
  view: { flag: string; what: string },
): Promise<Pick<ResourceStore, 'get' | 'list'> | number> {
  if (values['data-root'] !== undefined) {
    return usageError(
      out,
      statusCommand,
      `--data-root lists volumes: with ${view.flag} give --state-dir DIR (embedded plugin) or --kubeconfig FILE (cluster)`,
    );
  }
  const inCluster = values.kubeconfig !== undefined || values.context !== undefined;
  const stateDir = values['state-dir'];
  if (inCluster) {
    if (stateDir !== undefined) {
      return usageError(
        out,
        statusCommand,
        '--state-dir and --kubeconfig/--context name two places: give --state-dir for an embedded plugin, --kubeconfig (or --context) for a cluster',
      );
    }
    try {
      // client-node costs ~0.6 s to load: only the cluster form pays for it.
      return (await import('../common/cluster-store.js')).clusterStore(values);
    } catch (err) {
      return usageError(out, statusCommand, errorMessage(err));
    }
  }
  if (stateDir === undefined) {
    return usageError(
      out,
      statusCommand,
      `${view.flag} needs --state-dir DIR (${view.what} of the embedded plugin) or --kubeconfig FILE (${view.what} in a cluster)`,
    );
  }
  for (const flag of Object.keys(KUBE_CLIENT_OPTIONS)) {
    if (values.explicit.has(flag)) {
      return usageError(out, statusCommand, `--${flag}: only used with --kubeconfig or --context`);
    }
  }
  const dir = resolve(stateDir);
  if (!(await isDirectory(dir))) {
    return usageError(out, statusCommand, `state dir ${dir} does not exist or is not a directory`);
  }
  return new StateDirectoryReader(dir);
}

function parseFlags(args: string[]) {
  const { values, tokens } = parseArgs({
    args,
    options: {
      'data-root': { type: 'string' },
      certificate: { type: 'string' },
      requests: { type: 'boolean' },
      namespace: { type: 'string', short: 'n' },
      'state-dir': { type: 'string' },
      ...KUBE_CLIENT_OPTIONS,
      json: { type: 'boolean' },
      watch: { type: 'boolean', short: 'w' },
      help: { type: 'boolean', short: 'h' },
    },
    tokens: true,
  });
  // The flags given on the command line, defaults aside: some only fit one form.
  const explicit = new Set<string>(tokens.flatMap((t) => (t.kind === 'option' ? [t.name] : [])));
  return { ...values, explicit };
}

const statusCommand = { name: 'status', help: STATUS_HELP, parse: parseFlags };

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
