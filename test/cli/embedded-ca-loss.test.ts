import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { startEmbeddedPlugin } from '../../src/cli/node/embedded-plugin.js';
import { EmbeddedCaLostError } from '../../src/issuer/embedded-issuers.js';
import { createMounter } from '../../src/volume/create-mounter.js';
import { volumeManagerSettings } from '../../src/volume-manager/settings.js';
import { rejection, until } from '../support/eventually.js';
import { connectClient, embeddedCA } from '../support/plugin-harness.js';
import { inlineVolumeCall, podInfo } from '../support/publish-call.js';
import { type LogRecord, recordingLogger } from '../support/recording-logger.js';
import { tempDir } from '../support/temp-dir.js';

// Issue 9, class 7: a lost embedded CA is never replaced silently. Volumes on the data root that
// the CA signed tell a loss from a first start; their pods trust only the old CA.

const NAMESPACE = 'kube-system';
const VOLUME = `csi-${'7a'.repeat(32)}`;

function caFile(dir: string): string {
  return join(dir, 'state', 'core', 'secrets', NAMESPACE, 'embedded-ca.json');
}

/** The embedded plugin's options on dir's data root and state dir, logging into logger. */
function pluginOptions(dir: string, logger: ReturnType<typeof recordingLogger>) {
  return {
    endpoint: { kind: 'unix' as const, path: join(dir, 'csi.sock') },
    settings: volumeManagerSettings({ nodeId: 'ca-loss' }),
    driverName: 'csi.cert-manager.io',
    version: 'test',
    dataRoot: join(dir, 'volumes'),
    stateDir: join(dir, 'state'),
    mounter: createMounter({ mode: 'direct' }),
    logger,
    clusterResourceNamespace: NAMESPACE,
  };
}

/** Starts the embedded plugin on dir's data root and state dir, logging into a recording logger. */
async function start(t: Test, dir: string, acceptNewCa = false) {
  const logger = recordingLogger();
  const options = pluginOptions(dir, logger);
  const plugin = await startEmbeddedPlugin({
    ...options,
    controllers: { retry: { baseDelayMs: 20 } },
    ...(acceptNewCa ? { acceptNewCa } : {}),
  });
  const { client, stop } = connectClient(t, options.endpoint, plugin);
  return { plugin, client, stop, records: logger.records };
}

/** The records of a failed start: the logger is created before the start that throws. */
async function refusedStart(dir: string): Promise<{ err: unknown; records: LogRecord[] }> {
  const logger = recordingLogger();
  const err = await rejection(startEmbeddedPlugin(pluginOptions(dir, logger)));
  return { err, records: logger.records };
}

const messages = (records: LogRecord[], level: string) =>
  records.filter(([l]) => l === level).map(([, , msg]) => msg);

/** A plugin dir with one published volume signed by the embedded CA; returns its target. */
async function withVolume(t: Test): Promise<{ dir: string; target: string; ca: string }> {
  const dir = await tempDir(t, 'cert-csi-ca-loss-');
  const first = await start(t, dir);
  t.same(messages(first.records, 'info').includes('created the embedded CA'), true);
  t.same(messages(first.records, 'error'), [], 'a first start is quiet');
  const target = join(dir, 'pods', 'mount');
  await first.client.nodeCall(
    'NodePublishVolume',
    inlineVolumeCall(VOLUME, target, {
      ...podInfo({ name: 'app-0', namespace: 'sandbox' }),
      ...embeddedCA(),
    }),
  );
  await first.stop();
  return { dir, target, ca: await readFile(join(target, 'ca.crt'), 'utf8') };
}

t.test('a deleted CA Secret with volumes it signed refuses to start', async (t) => {
  const { dir, target, ca } = await withVolume(t);
  await rm(caFile(dir));
  const { err, records } = await refusedStart(dir);
  t.type(err, EmbeddedCaLostError);
  t.match(
    (err as Error).message,
    `the embedded CA Secret ${NAMESPACE}/embedded-ca cannot be used: it is missing, but 1 volume(s) on the data root hold certificates it signed (e.g. ${VOLUME})`,
  );
  t.match((err as Error).message, /Restore the state dir .*--accept-new-ca/);
  t.notOk(messages(records, 'info').includes('created the embedded CA'), 'no new CA');
  await t.rejects(readFile(caFile(dir)), { code: 'ENOENT' }, 'nothing written in its place');
  t.equal(await readFile(join(target, 'ca.crt'), 'utf8'), ca, 'the volume keeps its CA');

  // The refusal released its locks and stopped what it started: the operator's choice runs now.
  const accepted = await start(t, dir, true);
  const [replaced] = accepted.records.filter(([, , msg]) => msg?.startsWith('replaced a lost'));
  t.equal(replaced?.[0], 'error', 'said at error level');
  t.match(replaced?.[1], { secret: `${NAMESPACE}/embedded-ca`, volumes: 1 });
  // The whole renewal, metadata included, so the stop at teardown cuts nothing short.
  await until(() => messages(accepted.records, 'info').includes('certificate renewed'), {
    what: 'the volume renewed with the new CA',
    timeoutMs: 30_000,
  });
  t.not(await readFile(join(target, 'ca.crt'), 'utf8'), ca, 'the volume moved to the new CA');
});

t.test('a corrupt CA Secret file refuses to start and is never overwritten', async (t) => {
  const { dir } = await withVolume(t);
  await writeFile(caFile(dir), '{ this is not json');
  const { err, records } = await refusedStart(dir);
  t.type(err, EmbeddedCaLostError);
  t.match((err as Error).message, `${NAMESPACE}/embedded-ca cannot be used: it is missing`);
  t.ok(messages(records, 'error').includes('state file could not be read; moved aside'));
  const secrets = await readdir(join(dir, 'state', 'core', 'secrets', NAMESPACE));
  const aside = secrets.filter((name) => name.startsWith('embedded-ca.json.corrupt-'));
  t.equal(aside.length, 1, 'the corrupt file is kept aside');
  t.equal(
    await readFile(join(dir, 'state', 'core', 'secrets', NAMESPACE, aside[0] ?? ''), 'utf8'),
    '{ this is not json',
  );
  t.notOk(secrets.includes('embedded-ca.json'), 'no new CA in its place');
});

t.test('a CA Secret whose key is unusable refuses to start, even with no volume', async (t) => {
  const dir = await tempDir(t, 'cert-csi-ca-loss-');
  const first = await start(t, dir);
  await first.stop();
  const stored = JSON.parse(await readFile(caFile(dir), 'utf8'));
  stored.data['tls.key'] = Buffer.from('-----BEGIN PRIVATE KEY-----\nAAAA\n').toString('base64');
  const corrupt = `${JSON.stringify(stored)}\n`;
  await writeFile(caFile(dir), corrupt);
  const { err } = await refusedStart(dir);
  t.type(err, EmbeddedCaLostError);
  t.match((err as Error).message, `the embedded CA Secret ${NAMESPACE}/embedded-ca cannot be used`);
  t.equal(await readFile(caFile(dir), 'utf8'), corrupt, 'the Secret is left as it was');
});

t.test('no volume it signed and no CA: a first start again, quiet', async (t) => {
  const dir = await tempDir(t, 'cert-csi-ca-loss-');
  const first = await start(t, dir);
  await first.stop();
  await rm(caFile(dir));
  // A volume dir whose metadata cannot be read says nothing about its issuer; rediscovery sets it aside.
  const unreadable = join(dir, 'volumes', `csi-${'0b'.repeat(32)}`);
  await mkdir(unreadable);
  await writeFile(join(unreadable, 'metadata.json'), 'not json');
  const again = await start(t, dir);
  t.ok(messages(again.records, 'info').includes('created the embedded CA'));
  t.notOk(
    again.records.some(
      ([, , msg]) => msg?.includes('embedded CA') && msg !== 'created the embedded CA',
    ),
    'nothing about a lost CA',
  );
  t.same(messages(again.records, 'error'), ['unreadable metadata.json moved aside']);
});
