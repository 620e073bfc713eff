import t from 'tap';
import { runController } from '../../src/cli/controller/controller-command.js';
import { runNode } from '../../src/cli/node/node-command.js';
import { runWebhook } from '../../src/cli/webhook/webhook-command.js';
import { CONTROLLER_TOKEN, startCluster } from '../support/cluster-harness.js';
import { tempDir } from '../support/temp-dir.js';
import { startWebhookCluster, WEBHOOK_TOKEN } from '../support/webhook-cluster.js';
import { nodeArgs } from './embedded-node-args.js';

// Whoever stops a long-running command as soon as it reads its "started" line (a supervisor,
// the crash trials) sends SIGTERM then: if the command only listens for it after writing that
// line, the signal can land in between and its default action kills the process (no clean
// stop, no exit status). Each command gets its stop signal as `until`: it must have asked for
// it before the line is out. Here `until` notes whether the line was already written, and
// asks for the stop at once; the command then stops cleanly.

/** What a run showed: its exit status, and whether the started line was out when it asked. */
interface StopOrder {
  code: number;
  lineBeforeListening: boolean;
  lineWritten: boolean;
}

async function stopAtOnce(
  startedLine: string,
  run: (until: () => Promise<unknown>) => Promise<number>,
): Promise<StopOrder> {
  let logged = '';
  let lineBeforeListening: boolean | undefined;
  const write = process.stdout.write.bind(process.stdout);
  // The command's JSON log lines are kept, not printed into the TAP stream; anything else
  // (tap's own output) goes through.
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
    const text = String(chunk);
    if (!text.includes('"component":"cert-csi"')) return write(chunk, ...rest);
    logged += text;
    return true;
  }) as typeof process.stdout.write;
  try {
    const code = await run(async () => {
      lineBeforeListening ??= logged.includes(startedLine);
    });
    return {
      code,
      lineBeforeListening: lineBeforeListening ?? true,
      lineWritten: logged.includes(startedLine),
    };
  } finally {
    process.stdout.write = write;
  }
}

const CLEAN = { code: 0, lineBeforeListening: false, lineWritten: true };

t.test('cert-csi node listens for the stop before it says it started', async (t) => {
  const dir = await tempDir(t);
  const order = await stopAtOnce('cert-csi node plugin started', (until) =>
    runNode(nodeArgs(dir, [], 'stop-order'), until),
  );
  t.same(order, CLEAN);
});

t.test('cert-csi controller listens for the stop before it says it started', async (t) => {
  const cluster = await startCluster(t);
  const kubeconfig = await cluster.kubeconfigFile(CONTROLLER_TOKEN);
  const order = await stopAtOnce('cert-csi controller started', (until) =>
    runController(['--kubeconfig', kubeconfig, '--leader-elect=false'], until),
  );
  t.same(order, CLEAN);
});

t.test('cert-csi webhook listens for the stop before it says it started', async (t) => {
  const w = await startWebhookCluster(t);
  const kubeconfig = await w.cluster.kubeconfigFile(WEBHOOK_TOKEN);
  const order = await stopAtOnce('cert-csi webhook started', (until) =>
    runWebhook(
      [
        '--kubeconfig',
        kubeconfig,
        '--namespace',
        'cert-csi',
        '--secure-port',
        '0',
        '--shutdown-delay',
        '0s',
      ],
      until,
    ),
  );
  t.same(order, CLEAN);
});
