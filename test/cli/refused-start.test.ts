import { readdir } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { silentLogger } from '../../src/api/logger.js';
import { startEmbeddedPlugin } from '../../src/cli/node/embedded-plugin.js';
import { startNodeServices } from '../../src/cli/node/node-services.js';
import { SharedInformers } from '../../src/controller/shared-informers.js';
import { CsiClient } from '../../src/driver/csi-client.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { createMounter } from '../../src/volume/create-mounter.js';
import { DataRoot } from '../../src/volume/data-root.js';
import { askStatus } from '../../src/volume-manager/control/control-client.js';
import { CONTROL_SOCKET_NAME } from '../../src/volume-manager/control/control-protocol.js';
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

t.test(
  'a CSI endpoint refused after the control socket was served: the socket goes too',
  async (t) => {
    const dir = await tempDir(t, 'cert-csi-single-');
    // A TCP port another process listens on: the plugin finds out only when its CSI server binds,
    // after the volume manager started and the control socket was served.
    const taken = createServer((connection) => connection.destroy());
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    t.teardown(() => new Promise((resolve) => taken.close(resolve)));
    const { port } = taken.address() as AddressInfo;
    const dataRoot = join(dir, 'volumes');
    const options = {
      endpoint: { kind: 'tcp' as const, address: `127.0.0.1:${port}` },
      settings: volumeManagerSettings({ nodeId: 'control-refused' }),
      driverName: 'csi.cert-manager.io',
      version: 'test',
      dataRoot,
      mounter: createMounter({ mode: 'direct' }),
      logger: silentLogger,
    };
    t.match(
      await rejectionMessage(startNodeServices(options, nodeParts(new MemoryStore()))),
      `cannot listen on 127.0.0.1:${port}`,
    );
    t.notOk(
      (await readdir(dataRoot)).includes(CONTROL_SOCKET_NAME),
      'no control socket left in the data root',
    );
    const root = new DataRoot(dataRoot);
    await t.rejects(
      askStatus(root, { timeoutMs: 30_000 }),
      { name: 'ControlError', failure: 'no-plugin' },
      'a status call hears that no plugin runs there',
    );
    const socket = join(dir, 'csi.sock');
    const services = await startNodeServices(
      { ...options, endpoint: { kind: 'unix', path: socket } },
      nodeParts(new MemoryStore()),
    );
    t.same(
      await askStatus(root, { timeoutMs: 30_000 }),
      { unsaved: [], renewalsAsked: [] },
      'the data root was released: served again',
    );
    await services.stop();
  },
);
