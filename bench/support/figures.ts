/**
 * How a bench hands its figures to `npm run bench` (bench/all.ts): each figure is appended as
 * one JSON line to the file named by CERT_CSI_BENCH_FIGURES. Run alone, a bench only prints.
 */
import { appendFileSync } from 'node:fs';
import type { RawKeyType } from './raw-floor.js';

/** The environment variable naming the file the figures go to. */
export const FIGURES_FILE_VARIABLE = 'CERT_CSI_BENCH_FIGURES';

/** One figure of a bench. */
export interface Figure {
  /** What it is, e.g. "publish ECDSA P-256, 1 client". */
  name: string;
  value: number;
  /** `/s` (higher is better), `ms` (lower is better), or a count. */
  unit: string;
  p50?: number;
  p95?: number;
  /**
   * The raw floor it compares to: a whole issuance (key + CSR + verify + leaf + PEM) or a
   * signer's share (verify + leaf + PEM), for that key type and CA key type (ECDSA P-256
   * unless told). Without it, the figure has no
   * crypto floor and `ownFloor`, if any, is the bench's own.
   */
  rawFloor?: { of: 'issuance' | 'signing'; key: RawKeyType; ca?: RawKeyType };
  /** A floor the bench itself measured (same unit), for figures with no crypto floor. */
  ownFloor?: { value: number; what: string };
}

/** Records figures for bench/all.ts, if it is the caller. */
export function recordFigures(bench: string, figures: readonly Figure[]): void {
  const file = process.env[FIGURES_FILE_VARIABLE];
  if (!file) return;
  appendFileSync(file, figures.map((f) => `${JSON.stringify({ bench, ...f })}\n`).join(''));
}
