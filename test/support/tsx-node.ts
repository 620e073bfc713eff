import { type NodeProcess, startNode } from './cli-process.js';

/**
 * startNode under tsx: under tap the default loader is ts-node, which transpiles every source
 * file again in each child (6-7 s per start on a 2-core machine, against about 2 s with tsx).
 * For *.trial.ts files only, which run without coverage: under a coverage run tap's processinfo
 * hook gives the child its coverage environment back, and tsx-compiled coverage corrupts the
 * merged report.
 */
export function startTsxNode(args: readonly string[]): Promise<NodeProcess> {
  return startNode(args, { tsx: true });
}
