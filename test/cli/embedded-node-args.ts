import { join } from 'node:path';

// The flags the CLI tests start an embedded `cert-csi node` with.

/** Flags of an embedded-mode node plugin whose socket, volumes and state are all in dir. */
export function nodeArgs(dir: string, extra: string[] = [], nodeId = 'cli-test'): string[] {
  return [
    '--endpoint',
    `unix://${join(dir, 'csi.sock')}`,
    '--data-root',
    join(dir, 'volumes'),
    '--state-dir',
    join(dir, 'state'),
    '--mount-mode',
    'direct',
    '--node-id',
    nodeId,
    '--log-level',
    'info',
    ...extra,
  ];
}
