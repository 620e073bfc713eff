import { parseArgs } from 'node:util';
import { readVolumeStatuses, type VolumeStatus } from '../renewal/volume-status.js';
import { DataRoot } from '../volume/data-root.js';
import {
  type CommandOutput,
  isDirectory,
  processOutput,
  startDataRootCommand,
  usageError,
} from './data-root-command.js';

export const STATUS_HELP = `Usage: cert-csi status --data-root DIR [--json]

Lists the volumes of this node: volume id, pod, issuer, state, certificate expiry,
next renewal and last error. It reads the files under the data root, so it works
whether the plugin runs or not; a running plugin adds, through <data-root>/..status.sock,
the last errors it could not write to metadata.json (a full data root).

Long values are shortened with "…" to keep each row to one readable line; --json has
them whole.

States: ok; pending (an issuance or renewal is in flight or asked for); failing
(attempts fail and no valid certificate is served); expired; corrupt (metadata.json
unreadable, or moved aside by the plugin as metadata.json.corrupt-*); incomplete
(a volume dir without metadata).

Flags:
  --data-root DIR  the plugin's --data-root
  --json           print a JSON array instead of a table
  -h, --help       show this help
`;

/**
 * Widest cell of each column, in characters; a longer value is shortened with "…" (--json has
 * it whole). VOLUME fits kubelet's csi-<sha256> ids (68); NOT AFTER and NEXT RENEWAL fit a
 * time, and cap what an unparsable stored value would take.
 */
const COLUMN_WIDTHS = [72, 48, 48, 20, 24, 24, 60] as const;

/** `cert-csi status`: the volumes of this node, from their files. */
export async function runStatus(
  args: string[],
  out: CommandOutput = processOutput,
): Promise<number> {
  const started = startDataRootCommand(args, out, statusCommand);
  if (typeof started === 'number') return started;
  const { values, root } = started;
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

function parseFlags(args: string[]) {
  return parseArgs({
    args,
    options: {
      'data-root': { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  }).values;
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
