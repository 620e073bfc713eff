import { join } from 'node:path';

// The flags cli.test.ts and cli-manifests.test.ts start `cert-csi node` with.

/** Flags of an embedded-mode node plugin whose socket, volumes and state are all in dir. */
export function nodeArgs(dir: string, extra: string[] = []): string[] {
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
    'cli-test',
    '--log-level',
    'info',
    ...extra,
  ];
}
