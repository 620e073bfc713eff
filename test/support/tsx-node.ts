import { type NodeProcess, startNode } from './cli-process.js';

/**
 * startNode under tsx: under tap the default loader is ts-node, which transpiles every source
 * file again in each child (6-7 s per start on a 2-core machine, against about 2 s with tsx).
 * For tests that start the plugin dozens of times; the child's coverage is not collected.
 */
export function startTsxNode(args: readonly string[]): Promise<NodeProcess> {
  return startNode(args, { tsx: true });
}
