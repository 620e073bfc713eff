import { createServer } from 'node:net';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { silentLogger } from '../../src/api/logger.js';
import { startEmbeddedPlugin } from '../../src/cli/node/embedded-plugin.js';
import { startNodeServices } from '../../src/cli/node/node-services.js';
import { SharedInformers } from '../../src/controller/shared-informers.js';
import { CsiClient } from '../../src/driver/csi-client.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { createMounter } from '../../src/volume/create-mounter.js';
import { volumeManagerSettings } from '../../src/volume-manager/settings.js';
import { rejectionMessage } from '../support/eventually.js';
import { tempDir } from '../support/temp-dir.js';

// The process-level single-instance tests (second plugin, kill -9) are in
// single-instance.trial.ts, run without coverage like the crash trials.

async function probe(t: Test, socket: string): Promise<Record<string, unknown>> {
  const client = new CsiClient({ kind: 'unix', path: socket });
  t.teardown(() => client.close());
  return client.identityCall('Probe');
}

/** What the node services run on over a store, as both modes give them. */
function nodeParts(store: MemoryStore) {
  return { store, informers: new SharedInformers(store) };
}

t.test('in process: a refused start releases the data root it claimed', async (t) => {
  const dir = await tempDir(t, 'cert-csi-single-');
  const socket = join(dir, 'live.sock');
  const server = createServer((connection) => connection.destroy());
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  const options = {
    endpoint: { kind: 'unix' as const, path: socket },
    settings: volumeManagerSettings({ nodeId: 'single-instance' }),
    driverName: 'csi.cert-manager.io',
    version: 'test',
    dataRoot: join(dir, 'volumes'),
    mounter: createMounter({ mode: 'direct' }),
    logger: silentLogger,
  };
  // Both modes' shared start (kubernetes mode runs it as is) and the embedded one.
  t.match(
    await rejectionMessage(startNodeServices(options, nodeParts(new MemoryStore()))),
    `endpoint ${socket} is served by a running process`,
  );
  t.match(
    await rejectionMessage(
      startEmbeddedPlugin({
        ...options,
        stateDir: join(dir, 'state'),
        clusterResourceNamespace: 'kube-system',
      }),
    ),
    `endpoint ${socket} is served by a running process`,
  );
  await new Promise((resolve) => server.close(resolve));
  const plugin = await startEmbeddedPlugin({
    ...options,
    stateDir: join(dir, 'state'),
    clusterResourceNamespace: 'kube-system',
  });
  t.same(await probe(t, socket), { ready: { value: true } }, 'locks and socket were released');
  await plugin.stop();
});
