import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import t, { type Test } from 'tap';
import { silentLogger } from '../../src/api/logger.js';
import { CsiClient } from '../../src/driver/csi-client.js';
import { invalidArgument } from '../../src/driver/csi-error.js';
import { type ServiceHandlers, startCsiServer } from '../../src/driver/csi-server.js';
import { MAX_STATUS_MESSAGE_BYTES, statusMessage } from '../../src/driver/status-message.js';
import { rejection } from '../support/eventually.js';

// Generous: a stalled call fails the test instead of hanging it; a healthy one takes ms.
const CALL_TIMEOUT_MS = 20_000;

async function serve(t: Test, node: ServiceHandlers): Promise<CsiClient> {
  const dir = await mkdtemp(join(tmpdir(), 'cert-csi-status-'));
  const endpoint = { kind: 'unix' as const, path: join(dir, 'csi.sock') };
  const server = await startCsiServer({
    endpoint,
    identity: { Probe: () => ({ ready: { value: true } }) },
    node,
    logger: silentLogger,
  });
  const client = new CsiClient(endpoint);
  t.teardown(async () => {
    client.close();
    await server.close(100);
    await rm(dir, { recursive: true, force: true });
  });
  return client;
}

t.test(
  'a 100,000-character error reaches the client shortened, and the channel stays usable',
  async (t) => {
    const client = await serve(t, {
      NodePublishVolume: () => {
        throw invalidArgument(`csi.cert-manager.io/key-usages: "${'x'.repeat(100_000)}"`);
      },
      NodeUnpublishVolume: () => {
        throw new Error(`disk says ${'é'.repeat(50_000)}`);
      },
    });
    const err = (await rejection(
      client.nodeCall('NodePublishVolume', {}, { timeoutMs: CALL_TIMEOUT_MS }),
    )) as { code?: number; details?: string };
    t.equal(err.code, status.INVALID_ARGUMENT, 'the code the handler chose, not a timeout');
    t.match(err.details, /^csi\.cert-manager\.io\/key-usages: "x+… \[message shortened, /);
    t.match(err.details, /100034 characters in all\]$/);
    t.ok(encodeURI(err.details ?? '').length <= MAX_STATUS_MESSAGE_BYTES);

    const internal = (await rejection(
      client.nodeCall('NodeUnpublishVolume', {}, { timeoutMs: CALL_TIMEOUT_MS }),
    )) as { code?: number; details?: string };
    t.equal(internal.code, status.INTERNAL, 'any other error is capped too');
    t.match(internal.details, /^disk says é+… \[message shortened, 50010 characters in all\]$/);

    const probe = await client.identityCall<{ ready?: { value?: boolean } }>(
      'Probe',
      {},
      { timeoutMs: CALL_TIMEOUT_MS },
    );
    t.equal(probe.ready?.value, true, 'the next call on the same channel is answered');
  },
);

t.test('statusMessage keeps short messages and never splits a character', async (t) => {
  t.equal(statusMessage('volume id is required'), 'volume id is required');
  t.equal(statusMessage('bad \ud800 value'), 'bad \uFFFD value', 'a lone surrogate is replaced');
  const emoji = statusMessage('🔑'.repeat(10_000));
  t.match(emoji, /^(🔑)+… \[message shortened, 10000 characters in all\]$/u);
  t.ok(encodeURI(emoji).length <= MAX_STATUS_MESSAGE_BYTES);
  const exact = 'a'.repeat(MAX_STATUS_MESSAGE_BYTES);
  t.equal(statusMessage(exact), exact, 'exactly the limit is not shortened');
});
