// Cells of the tables `cert-csi status` prints.

/** kubectl's KIND.GROUP/NAME, with cert-manager's own group left out as it is the usual one. */
export function issuerText(issuer: { name: string; kind: string; group: string }): string {
  const kind = issuer.group === 'cert-manager.io' ? issuer.kind : `${issuer.kind}.${issuer.group}`;
  return `${kind}/${issuer.name}`;
}

/** One line of at most width characters (code points, so no character is split), "…" when cut. */
export function shorten(text: string, width: number): string {
  const flat = Array.from(text.replace(/[\s\p{Cc}]+/gu, ' ').trim());
  return flat.length > width ? `${flat.slice(0, width - 1).join('')}…` : flat.join('');
}

/** Rows (header first) as aligned columns two spaces apart; the last column is not padded. */
export function alignedRows(rows: readonly string[][]): string {
  const widths = new Map<number, number>();
  for (const row of rows) {
    for (const [i, cell] of row.entries()) widths.set(i, Math.max(widths.get(i) ?? 0, cell.length));
  }
  // Every column index of every row was measured above: the fallback never applies.
  /* c8 ignore next */
  const widthOf = (i: number) => widths.get(i) ?? 0;
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widthOf(i))))
      .join('  ')
      .trimEnd();
  return `${rows.map(line).join('\n')}\n`;
}
