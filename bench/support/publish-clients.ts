/**
 * The kubelet side of bench/publish: NodePublishVolume calls over the plugin's unix socket from
 * `clients` concurrent callers, each call's latency measured. Either in the plugin's own thread
 * (its gRPC client work then counts against the plugin), or, as kubelet is another process, in a
 * worker thread of its own: the plugin's thread does only the plugin's work.
 */
import { join } from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { CsiClient } from '../../src/driver/csi-client.js';
import type { Endpoint } from '../../src/driver/endpoint.js';
import { inlineVolumeCall, podInfo } from '../../test/support/publish-call.js';

/** One measured round: each publish's latency in ms, and publishes per second overall. */
export interface Round {
  samples: number[];
  perSecond: number;
}

/** Publishes total new volumes from clients concurrent callers; attributes: the key's. */
export interface PublishClients {
  measure(attributes: Record<string, string>, total: number, clients: number): Promise<Round>;
  close(): Promise<void>;
}

interface Setup {
  endpoint: Endpoint;
  /** Where the targets go (`<targets>/pods/<volume id>`). */
  targets: string;
  /** Volume ids start with this, so two sets of clients never publish the same volume. */
  prefix: string;
}

function publishRequest(setup: Setup, n: number, attributes: Record<string, string>) {
  const id = `${setup.prefix}-${n}`;
  return inlineVolumeCall(id, join(setup.targets, 'pods', id), {
    ...podInfo({ name: id, namespace: 'bench', uid: '00000000-0000-4000-8000-000000000000' }),
    'csi.cert-manager.io/issuer-name': 'embedded-ca',
    'csi.cert-manager.io/issuer-kind': 'ClusterIssuer',
    'csi.cert-manager.io/dns-names': `${id}.bench.svc`,
    ...attributes,
  });
}

// The callers themselves, wherever they run.
function callers(setup: Setup) {
  const client = new CsiClient(setup.endpoint);
  let counter = 0;
  return {
    async measure(attributes: Record<string, string>, total: number, clients: number) {
      const samples: number[] = [];
      let started = 0;
      const start = performance.now();
      await Promise.all(
        Array.from({ length: clients }, async () => {
          while (started < total) {
            started++;
            const begin = performance.now();
            await client.nodeCall(
              'NodePublishVolume',
              publishRequest(setup, counter++, attributes),
            );
            samples.push(performance.now() - begin);
          }
        }),
      );
      return { samples, perSecond: (samples.length / (performance.now() - start)) * 1000 };
    },
    close: () => client.close(),
  };
}

/** Callers in this thread, sharing it with the plugin. */
export function clientsInProcess(setup: Setup): PublishClients {
  const own = callers(setup);
  return { measure: own.measure, close: async () => own.close() };
}

type Ask = { id: number; attributes: Record<string, string>; total: number; clients: number };
type Answer = { id: number; round?: Round; error?: string };

/** Callers in a worker thread of their own, as kubelet's calls come from another process. */
export function clientsInThread(setup: Setup): PublishClients {
  // The same module, run as the worker (below). The tsx command's loader does not reach worker
  // threads, so the worker starts from a line of JavaScript that loads this .ts module with tsx.
  const worker = new Worker(
    `import('tsx/esm/api').then(({ tsImport }) => tsImport(${JSON.stringify(import.meta.url)}, ${JSON.stringify(import.meta.url)}));`,
    { eval: true, workerData: setup },
  );
  const waiting = new Map<number, { resolve: (r: Round) => void; reject: (e: Error) => void }>();
  let next = 0;
  const failAll = (err: Error) => {
    for (const { reject } of waiting.values()) reject(err);
    waiting.clear();
  };
  worker.on('message', (answer: Answer) => {
    const pending = waiting.get(answer.id);
    waiting.delete(answer.id);
    if (answer.round) pending?.resolve(answer.round);
    else pending?.reject(new Error(answer.error ?? 'the client thread failed'));
  });
  worker.on('error', failAll);
  worker.on('exit', (code) => failAll(new Error(`the client thread exited (${code})`)));
  return {
    measure: (attributes, total, clients) =>
      new Promise<Round>((resolve, reject) => {
        const id = next++;
        waiting.set(id, { resolve, reject });
        worker.postMessage({ id, attributes, total, clients } satisfies Ask);
      }),
    close: async () => {
      await worker.terminate();
    },
  };
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  const own = callers(workerData as Setup);
  port.on('message', (ask: Ask) => {
    own.measure(ask.attributes, ask.total, ask.clients).then(
      (round) => port.postMessage({ id: ask.id, round } satisfies Answer),
      (err: unknown) =>
        port.postMessage({
          id: ask.id,
          error: String((err as Error)?.message ?? err),
        } satisfies Answer),
    );
  });
}
