import type { RequestAwaitingApproval } from '../../issuer/certificaterequests/awaiting-approval.js';
import { alignedRows, issuerText, shorten } from '../common/table-cells.js';

/** The requests awaiting approval as an aligned table, oldest first; a line when there is none. */
export function formatRequestsTable(
  rows: readonly RequestAwaitingApproval[],
  where: string,
): string {
  if (rows.length === 0) return `no CertificateRequests awaiting approval in ${where}\n`;
  const header = ['NAMESPACE', 'NAME', 'ISSUER', 'REQUESTER', 'AGE'];
  // Each cell with its widest form: namespaces are at most 63 characters, names 253.
  const cells = rows.map((r) =>
    (
      [
        [r.namespace, 63],
        [r.name, 80],
        [issuerText(r.issuer), 60],
        [r.requester || '-', 60],
        [r.ageSeconds === undefined ? '-' : ageText(r.ageSeconds), 10],
      ] as const
    ).map(([text, width]) => shorten(text, width)),
  );
  return alignedRows([header, ...cells]);
}

/**
 * An age as kubectl's AGE column prints one: seconds up to 2 minutes, then minutes (with
 * seconds under 10 minutes), hours (with minutes under 8 hours), days (with hours under 8
 * days), years (with days under 8 years).
 */
export function ageText(seconds: number): string {
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return withRest(minutes, 'm', seconds % 60, 's');
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return withRest(hours, 'h', minutes % 60, 'm');
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return withRest(Math.floor(hours / 24), 'd', hours % 24, 'h');
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  const years = Math.floor(hours / (24 * 365));
  if (hours < 24 * 365 * 8) return withRest(years, 'y', Math.floor(hours / 24) % 365, 'd');
  return `${years}y`;
}

function withRest(value: number, unit: string, rest: number, restUnit: string): string {
  return rest === 0 ? `${value}${unit}` : `${value}${unit}${rest}${restUnit}`;
}
