// reload-signal end to end in Kubernetes mode: a node plugin with --reload-signals finds the
// pod in its pod informer (the fake API server's Pod, with the container id kubelet reports),
// the container's processes through /proc/<pid>/cgroup, and signals its init process at each
// renewal. The processes are real and really in cgroups named as kubelet names them, made under
// a directory of this test in this machine's cgroup v1 and v2 hierarchies.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, constants } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { type KubeEvent, KubeEventKind } from '../../src/api/kube-event.js';
import { type Pod, PodKind } from '../../src/api/pod.js';
import {
  caIssuerAttributes,
  POD_NAMESPACE,
  startCluster,
  startClusterController,
  startClusterPlugin,
} from '../support/cluster-harness.js';
import { until } from '../support/eventually.js';
import { podInfo } from '../support/publish-call.js';

/** A kubelet cgroup layout: where its hierarchy is mounted and the container's cgroup path in it. */
interface Layout {
  name: string;
  /** A hierarchy of this machine (v1: one controller's; v2: the unified one). */
  hierarchy: string;
  /** The container's cgroup below the kubelet root, as kubelet and the runtime name it. */
  path(podUid: string, containerId: string): string[];
}

const LAYOUTS: Layout[] = [
  {
    // cgroup v1, kubelet's cgroupfs driver: a burstable pod, the bare container id.
    name: 'cgroup v1, cgroupfs driver',
    hierarchy: '/sys/fs/cgroup/pids',
    path: (uid, id) => ['kubepods', 'burstable', `pod${uid}`, id],
  },
  {
    // cgroup v2, the systemd driver and containerd: slices and a scope.
    name: 'cgroup v2, systemd driver',
    hierarchy: '/sys/fs/cgroup/unified',
    path: (uid, id) => [
      'kubepods.slice',
      'kubepods-besteffort.slice',
      `kubepods-besteffort-pod${uid.replaceAll('-', '_')}.slice`,
      `cri-containerd-${id}.scope`,
    ],
  },
];

const ID = 'a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0a1b2';
/** Another container's id that starts like ID. */
const SIMILAR = `${ID.slice(0, 60)}ffff`;

function writable(hierarchy: string): boolean {
  try {
    accessSync(join(hierarchy, 'cgroup.procs'), constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

// A real process that ends on the first signal it gets: its exit tells which one.
function sleeper(t: Test): ChildProcess & { pid: number } {
  const child = spawn('sleep', ['1000'], { stdio: 'ignore' });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return child as ChildProcess & { pid: number };
}
const untouched = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;
/** The signal that ended child, or 'none' when it is still running 30 s later. */
async function signalOf(child: ChildProcess): Promise<string> {
  if (child.signalCode !== null) return child.signalCode;
  const deadline = AbortSignal.timeout(30_000);
  const exit = await once(child, 'exit', { signal: deadline }).catch(() => undefined);
  return (exit?.[1] as string | null | undefined) ?? 'none';
}

const cluster = await startCluster(t);
await cluster.seedIssuer();
startClusterController(t, cluster);

/** Creates a pod on node whose one container "web" runs as containerd id. */
async function runningPod(name: string, node: string, id: string): Promise<Pod> {
  const created = await cluster.server.store.create<Pod>(PodKind, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: POD_NAMESPACE },
    spec: { nodeName: node, serviceAccountName: 'app' },
  });
  return cluster.server.store.updateStatus<Pod>(PodKind, {
    ...created,
    status: {
      podIP: '10.0.0.7',
      podIPs: [{ ip: '10.0.0.7' }],
      conditions: [{ type: 'Ready', status: 'True' }],
      containerStatuses: [{ name: 'web', containerID: `containerd://${id}` }],
    },
  });
}

for (const layout of LAYOUTS) {
  t.test(
    `${layout.name}: a renewal signals exactly the init process of the pod's container; an ambiguous or missing match signals nothing and is a Warning Event`,
    {
      skip: !writable(layout.hierarchy) && `${layout.hierarchy} is not a writable cgroup hierarchy`,
    },
    async (t) => {
      const node = `node-${layout.hierarchy.split('/').at(-1)}`;
      const base = join(layout.hierarchy, `cert-csi-test-${process.pid}-${node}`);
      t.teardown(() => {
        // Leaves first: a cgroup dir is removed only when it holds no process and no child.
        execFileSync('sh', [
          '-c',
          `find ${base} -depth -type d -exec rmdir {} + 2>/dev/null || true`,
        ]);
      });
      const inCgroup = async (uid: string, id: string, child: ChildProcess) => {
        const dir = join(base, ...layout.path(uid, id));
        await mkdir(dir, { recursive: true });
        await writeFile(join(dir, 'cgroup.procs'), `${child.pid}\n`);
      };
      const pod = await runningPod(`web-${node}`, node, ID);
      const other = await runningPod(`other-${node}`, node, ID);
      const uid = pod.metadata.uid ?? '';
      const ours = sleeper(t);
      const sameIdOtherPod = sleeper(t);
      const similarId = sleeper(t);
      await inCgroup(uid, ID, ours);
      await inCgroup(other.metadata.uid ?? '', ID, sameIdOtherPod);
      await inCgroup(uid, SIMILAR, similarId);

      const plugin = await startClusterPlugin(t, cluster, {
        nodeId: node,
        reloadSignals: 'pod-processes',
      });
      t.teardown(() => plugin.stop());
      // The node's pod informer has the pod with its container id before the first publish.
      await until(
        () =>
          plugin.plugin.informers.informer<Pod>(PodKind).get(pod.metadata.name, POD_NAMESPACE)
            ?.status?.containerStatuses?.[0]?.containerID,
        { timeoutMs: 30_000 },
      );
      const volumeId = `vol-${node}`;
      const context = podInfo({
        name: pod.metadata.name,
        namespace: POD_NAMESPACE,
        uid,
        serviceAccount: 'app',
      });
      await plugin.publish(
        volumeId,
        {
          ...caIssuerAttributes,
          'csi.cert-manager.io/key-algorithm': 'ECDSA',
          'csi.cert-manager.io/reload-signal': 'USR1',
        },
        context,
      );
      t.ok(untouched(ours), 'the first issuance signals nobody');

      const events = async (reason: string) => {
        await plugin.plugin.events.flush();
        const all = await cluster.server.store.list<KubeEvent>(KubeEventKind, {
          namespace: POD_NAMESPACE,
        });
        return all.items.filter(
          (e) => e.reason === reason && e.involvedObject.name === pod.metadata.name,
        );
      };

      t.equal((await plugin.plugin.manager.renewNow({ volumeId })).renewed.length, 1, 'renewed');
      t.equal(await signalOf(ours), 'SIGUSR1', "the container's init process got SIGUSR1");
      t.ok(untouched(sameIdOtherPod), 'the same container id in another pod: untouched');
      t.ok(untouched(similarId), 'a similar container id in the same pod: untouched');
      const sent = await until(async () => (await events('CertificateReloadSignalled'))[0], {
        timeoutMs: 30_000,
      });
      t.match(sent, {
        type: 'Normal',
        message: `volume ${volumeId}: SIGUSR1 to pid ${ours.pid}`,
      });

      // Two candidate init processes in the container: nothing is sent.
      const first = sleeper(t);
      const second = sleeper(t);
      await inCgroup(uid, ID, first);
      await inCgroup(uid, ID, second);
      t.equal((await plugin.plugin.manager.renewNow({ volumeId })).renewed.length, 1, 'renewed');
      const ambiguous = await until(async () => (await events('CertificateReloadFailed'))[0], {
        timeoutMs: 30_000,
      });
      t.match(ambiguous, {
        type: 'Warning',
        message: `volume ${volumeId}: signal reload not sent: container "web" has 2 candidate init processes`,
      });

      // kubelet reports the container without an id (restarting): nothing either.
      const current = await cluster.server.store.get<Pod>(
        PodKind,
        pod.metadata.name,
        POD_NAMESPACE,
      );
      await cluster.server.store.updateStatus<Pod>(PodKind, {
        ...current,
        status: { ...current.status, containerStatuses: [{ name: 'web' }] },
      });
      await until(
        () =>
          plugin.plugin.informers.informer<Pod>(PodKind).get(pod.metadata.name, POD_NAMESPACE)
            ?.status?.containerStatuses?.[0]?.containerID === undefined || undefined,
        { timeoutMs: 30_000 },
      );
      t.equal((await plugin.plugin.manager.renewNow({ volumeId })).renewed.length, 1, 'renewed');
      const missing = await until(
        async () =>
          (await events('CertificateReloadFailed')).find((e) =>
            e.message?.includes('has no container id yet'),
          ),
        { timeoutMs: 30_000 },
      );
      t.match(missing, {
        type: 'Warning',
        message: `volume ${volumeId}: signal reload not sent: container "web" has no container id yet`,
      });
      t.ok(
        untouched(first) && untouched(second) && untouched(sameIdOtherPod) && untouched(similarId),
        'no other process was ever signalled',
      );
    },
  );
}
