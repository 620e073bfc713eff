// The script side of runNamespaceScenario (mount-namespace.ts): scripts that run inside a
// private mount namespace, collect checks and print them as their last stdout line.
import { join } from 'node:path';
import { silentLogger } from '../../src/api/logger.js';
import { startEmbeddedPlugin } from '../../src/cli/node/embedded-plugin.js';
import { CsiClient } from '../../src/driver/csi-client.js';
import { createMounter } from '../../src/volume/create-mounter.js';
import { volumeManagerSettings } from '../../src/volume-manager/settings.js';
import type { NamespaceCheck } from './mount-namespace.js';

/** The work dir the script was given, a check collector, and the report runNamespaceScenario reads. */
export function namespaceScenario(script: string): {
  work: string;
  check(name: string, ok: boolean, detail?: unknown): void;
  report(): void;
} {
  const [work] = process.argv.slice(2);
  if (!work) throw new Error(`usage: ${script} <work-dir>`);
  const checks: NamespaceCheck[] = [];
  return {
    work,
    check: (name, ok, detail) => {
      checks.push(detail === undefined ? { name, ok } : { name, ok, detail });
    },
    report: () => {
      process.stdout.write(`${JSON.stringify({ checks })}\n`);
    },
  };
}

/** The embedded plugin in bind mode on `<work>/volumes`, its socket `<work>/csi.sock`, and a client. */
export async function startBindModePlugin(work: string, options: { tmpfsSize?: string } = {}) {
  const endpoint = { kind: 'unix' as const, path: join(work, 'csi.sock') };
  const plugin = await startEmbeddedPlugin({
    endpoint,
    settings: volumeManagerSettings({ nodeId: 'ns-node' }),
    driverName: 'csi.cert-manager.io',
    version: 'test',
    dataRoot: join(work, 'volumes'),
    mounter: createMounter({ mode: 'bind', ...options }),
    logger: silentLogger,
    clusterResourceNamespace: 'kube-system',
  });
  return { plugin, client: new CsiClient(endpoint) };
}
