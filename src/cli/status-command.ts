import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { type NamespacedName, parseNamespacedName } from '../api/namespaced-name.js';
import { errorMessage } from '../base/error-message.js';
import {
  type CertificateStatusReport,
  readCertificateStatus,
} from '../certificates/certificate-status-report.js';
import { readVolumeStatuses, type VolumeStatus } from '../renewal/volume-status.js';
import type { ResourceStore } from '../store/resource-store.js';
import { DataRoot } from '../volume/data-root.js';
import { StateDirectoryReader } from '../volume/state-directory-reader.js';
import { formatCertificateStatus } from './certificate-status-text.js';
import {
  type CommandOutput,
  isDirectory,
  processOutput,
  startCommand,
  usageError,
} from './data-root-command.js';
import { KUBE_CLIENT_HELP, KUBE_CLIENT_OPTIONS } from './kube-flags.js';

export const STATUS_HELP = `Usage: cert-csi status --data-root DIR [--json]
       cert-csi status --certificate NAMESPACE/NAME --state-dir DIR [--json]
       cert-csi status --certificate NAMESPACE/NAME --kubeconfig FILE [--context NAME] [--json]

Lists the volumes of this node: volume id, pod, issuer, state, certificate expiry,
next renewal and last error. It reads the files under the data root, so it works
whether the plugin runs or not; a running plugin adds, through <data-root>/..status.sock,
the last errors it could not write to metadata.json (a full data root).

Long values are shortened with "…" to keep each row to one readable line; --json has
them whole.

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

Exit codes: 0 shown; 1 the Certificate does not exist or could not be read; 2 bad
flags (a malformed NAMESPACE/NAME, an unusable kubeconfig, a missing directory).

Flags:
  --data-root DIR                the plugin's --data-root (volumes)
  --certificate NAMESPACE/NAME   show this Certificate instead of the volumes
  --state-dir DIR                the embedded plugin's --state-dir (with --certificate)
  --json                         print JSON instead of text
  -h, --help                     show this help

Cluster, with --certificate:
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
): Promise<number> {
  const started = startCommand(args, out, statusCommand);
  if (typeof started === 'number') return started;
  const { values } = started;
  if (values.certificate !== undefined) return certificateStatus(values, out);
  for (const flag of ['state-dir', ...Object.keys(KUBE_CLIENT_OPTIONS)]) {
    if (values.explicit.has(flag)) {
      return usageError(out, statusCommand, `--${flag}: only used with --certificate`);
    }
  }
  const dataRoot = values['data-root'];
  if (!dataRoot) return usageError(out, statusCommand, '--data-root is required');
  // Absolute, so every message names the same directory the plugin's logs do.
  const root = resolve(dataRoot);
  if (!(await isDirectory(root))) {
    return usageError(out, statusCommand, `data root ${root} does not exist or is not a directory`);
  }
  const statuses = await readVolumeStatuses(new DataRoot(root));
  if (values.json) {
    out.stdout.write(`${JSON.stringify(statuses, null, 2)}\n`);
  } else if (statuses.length === 0) {
    out.stdout.write(`no volumes in ${root}\n`);
  } else {
    out.stdout.write(formatTable(statuses));
  }
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
  if (values['data-root'] !== undefined) {
    return usageError(
      out,
      statusCommand,
      '--data-root lists volumes: with --certificate give --state-dir DIR (embedded plugin) or --kubeconfig FILE (cluster)',
    );
  }
  const inCluster = values.kubeconfig !== undefined || values.context !== undefined;
  const stateDir = values['state-dir'];
  let store: Pick<ResourceStore, 'get' | 'list'>;
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
      store = (await import('./cluster-store.js')).clusterStore(values);
    } catch (err) {
      return usageError(out, statusCommand, errorMessage(err));
    }
  } else {
    if (stateDir === undefined) {
      return usageError(
        out,
        statusCommand,
        '--certificate needs --state-dir DIR (a Certificate of the embedded plugin) or --kubeconfig FILE (a Certificate in a cluster)',
      );
    }
    for (const flag of Object.keys(KUBE_CLIENT_OPTIONS)) {
      if (values.explicit.has(flag)) {
        return usageError(
          out,
          statusCommand,
          `--${flag}: only used with --kubeconfig or --context`,
        );
      }
    }
    const dir = resolve(stateDir);
    if (!(await isDirectory(dir))) {
      return usageError(
        out,
        statusCommand,
        `state dir ${dir} does not exist or is not a directory`,
      );
    }
    store = new StateDirectoryReader(dir);
  }
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

function parseFlags(args: string[]) {
  const { values, tokens } = parseArgs({
    args,
    options: {
      'data-root': { type: 'string' },
      certificate: { type: 'string' },
      'state-dir': { type: 'string' },
      ...KUBE_CLIENT_OPTIONS,
      json: { type: 'boolean' },
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

function issuerText(issuer: { name: string; kind: string; group: string }): string {
  // kubectl's KIND.GROUP/NAME, with cert-manager's own group left out as it is the usual one.
  const kind = issuer.group === 'cert-manager.io' ? issuer.kind : `${issuer.kind}.${issuer.group}`;
  return `${kind}/${issuer.name}`;
}

// Seconds are enough in a table; --json keeps the stored text.
function timeText(time: string | undefined): string {
  if (time === undefined) return '-';
  const ms = Date.parse(time);
  return Number.isNaN(ms) ? time : new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

// One line of at most width characters (code points, so no character is split).
function shorten(text: string, width: number): string {
  const flat = Array.from(text.replace(/[\s\p{Cc}]+/gu, ' ').trim());
  return flat.length > width ? `${flat.slice(0, width - 1).join('')}…` : flat.join('');
}
