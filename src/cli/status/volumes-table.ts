import type { VolumeStatus } from '../../volume-manager/control/volume-status.js';
import { issuerText, shorten } from '../common/table-cells.js';
import { errorCellText } from './error-cell.js';

/**
 * Widest cell of each column, in characters; a longer value is shortened with "…" (--json has
 * it whole). VOLUME fits kubelet's csi-<sha256> ids (68); NOT AFTER and NEXT RENEWAL fit a
 * time, and cap what an unparsable stored value would take.
 */
const COLUMN_WIDTHS = [72, 48, 48, 20, 24, 24, 60] as const;

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
      s.lastError === undefined ? (s.detail ?? '-') : errorCellText(s.lastError.message),
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

/** A time as the table shows it: to the second (--json keeps the stored text); `-` for none. */
export function timeText(time: string | undefined): string {
  if (time === undefined) return '-';
  const ms = Date.parse(time);
  return Number.isNaN(ms) ? time : new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
