import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, constants } from 'node:fs';
import { mkdir, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { Pod } from '../../src/api/pod.js';
import type { VolumeCertificateSpec } from '../../src/api/volume-spec.js';
import {
  type ReloadSignalMode,
  VolumeReloader,
} from '../../src/volume-manager/reload/volume-reloader.js';
import type { PodEvent } from '../../src/volume-manager/telemetry/failure-event.js';
import { until } from '../support/eventually.js';
import { embeddedCA, startPlugin } from '../support/plugin-harness.js';
import { recordingLogger } from '../support/recording-logger.js';
import { tempDir } from '../support/temp-dir.js';

// A real process that ends on the first signal it gets: its exit tells which one.
function sleeper(t: Test): ChildProcess & { pid: number } {
  const child = spawn('sleep', ['1000'], { stdio: 'ignore' });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return child as ChildProcess & { pid: number };
}
const signalOf = async (child: ChildProcess) =>
  child.signalCode ?? ((await once(child, 'exit'))[1] as string);

/** A reloader on this machine's /proc that records its Events into events. */
function reloaderOf(
  signals: ReloadSignalMode,
  events: PodEvent[],
  pod: () => Pod | undefined = () => undefined,
): VolumeReloader {
  return new VolumeReloader({
    nodeId: 'n',
    podSource: { get: pod },
    signals,
    procRoot: '/proc',
    logger: recordingLogger(),
    onEvent: (event) => events.push(event),
  });
}

t.test('embedded mode: reload-pid-file names the process a renewal signals', async (t) => {
  const p = await startPlugin(t);
  const child = sleeper(t);
  const pidFile = join(p.dir, 'app.pid');
  await writeFile(pidFile, `${child.pid}\n`);
  await p.publish(
    'csi-signalled',
    embeddedCA({
      'csi.cert-manager.io/key-algorithm': 'ECDSA',
      'csi.cert-manager.io/reload-signal': 'HUP',
      'csi.cert-manager.io/reload-pid-file': pidFile,
    }),
  );
  t.equal(child.exitCode ?? child.signalCode, null, 'the first issuance signals nobody');
  await p.manager.renewNow({ volumeId: 'csi-signalled' });
  t.equal(await signalOf(child), 'SIGHUP', 'the renewal sent SIGHUP to the pid of the file');
  const event = await until(() =>
    p.events.all().find((e) => e.reason === 'CertificateReloadSignalled'),
  );
  t.match(event, {
    type: 'Normal',
    name: 'app-0',
    message: `volume csi-signalled: SIGHUP to pid ${child.pid}`,
  });
});

// cgroup v2 as the kubelet names it (systemd driver), under a directory of this test in the
// machine's unified hierarchy; the processes are real and really in those cgroups.
const UNIFIED = '/sys/fs/cgroup/unified';
const UID = '5c0ffee0-1234-4abc-8def-0123456789ab';
const OTHER_UID = '5c0ffee0-1234-4abc-8def-0123456789ac';
const ID = 'a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0a1b2';
const SIMILAR = `${ID.slice(0, 60)}ffff`;

async function inCgroup(base: string, uid: string, id: string, child: ChildProcess) {
  const dir = join(
    base,
    'kubepods.slice',
    'kubepods-besteffort.slice',
    `kubepods-besteffort-pod${uid.replaceAll('-', '_')}.slice`,
    `cri-containerd-${id}.scope`,
  );
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'cgroup.procs'), `${child.pid}\n`);
}

t.test(
  'Kubernetes mode: a renewal signals exactly its container init process, found by cgroup',
  { skip: !canUseCgroups() && `${UNIFIED} is not a writable cgroup v2 hierarchy` },
  async (t) => {
    const base = join(UNIFIED, `cert-csi-test-${process.pid}`);
    t.teardown(async () => {
      // Leaves first: a cgroup dir is removed only when empty of processes and children.
      execFileSync('sh', [
        '-c',
        `find ${base} -depth -type d -exec rmdir {} + 2>/dev/null || true`,
      ]);
    });
    const ours = sleeper(t);
    const otherPod = sleeper(t);
    const similarId = sleeper(t);
    await inCgroup(base, UID, ID, ours);
    await inCgroup(base, OTHER_UID, ID, otherPod);
    await inCgroup(base, UID, SIMILAR, similarId);
    const events: PodEvent[] = [];
    let pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web-0', namespace: 'shop', uid: UID },
      status: { containerStatuses: [{ name: 'web', containerID: `containerd://${ID}` }] },
    };
    const reloader = reloaderOf('pod-processes', events, () => pod);
    const spec = {
      pod: { name: 'web-0', namespace: 'shop', uid: UID, serviceAccountName: 'web' },
      reload: { signal: { name: 'SIGUSR1' } },
    } as VolumeCertificateSpec;
    reloader.rewritten('csi-web', spec, {});
    await reloader.idle();
    t.equal(await signalOf(ours), 'SIGUSR1', 'the init process of the container got SIGUSR1');
    t.equal(
      otherPod.signalCode ?? otherPod.exitCode,
      null,
      'the same id in another pod: untouched',
    );
    t.equal(similarId.signalCode ?? similarId.exitCode, null, 'a similar id in the pod: untouched');
    t.match(events, [{ type: 'Normal', reason: 'CertificateReloadSignalled' }]);

    // Two candidate inits in the container (both children of this process): nothing is sent.
    const first = sleeper(t);
    const second = sleeper(t);
    await inCgroup(base, UID, ID, first);
    await inCgroup(base, UID, ID, second);
    reloader.rewritten('csi-web', spec, {});
    await reloader.idle();
    // No container id yet: nothing either.
    pod = { ...pod, status: { containerStatuses: [{ name: 'web' }] } };
    reloader.rewritten('csi-web', spec, {});
    await reloader.idle();
    t.equal(first.signalCode ?? first.exitCode, null, 'ambiguous: not signalled');
    t.equal(second.signalCode ?? second.exitCode, null, 'ambiguous: not signalled');
    t.match(events.slice(1), [
      {
        type: 'Warning',
        reason: 'CertificateReloadFailed',
        message:
          'volume csi-web: signal reload not sent: container "web" has 2 candidate init processes',
      },
      {
        type: 'Warning',
        reason: 'CertificateReloadFailed',
        message: 'volume csi-web: signal reload not sent: container "web" has no container id yet',
      },
    ]);
    await rmdir(base).catch(() => undefined);
  },
);

function canUseCgroups(): boolean {
  try {
    accessSync(join(UNIFIED, 'cgroup.procs'), constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

t.test(
  'a PID file that names no process, or a node without PID files, sends nothing',
  async (t) => {
    const dir = await tempDir(t);
    const events: PodEvent[] = [];
    const specWith = (pidFile: string) =>
      ({
        pod: { name: 'app-0', namespace: 'default', uid: 'u', serviceAccountName: 'app' },
        reload: { signal: { name: 'SIGHUP', pidFile } },
      }) as VolumeCertificateSpec;
    const cases: [string, string, 'pid-file' | 'pod-processes', RegExp][] = [
      ['not a number', 'abc\n', 'pid-file', /PID file .*bad\.pid holds no pid$/],
      ['pid 1', '1\n', 'pid-file', /PID file .*bad\.pid holds no pid$/],
      ['missing', '', 'pid-file', /ENOENT/],
      ['on a node of pod processes', '4194304\n', 'pod-processes', /for embedded mode only/],
    ];
    for (const [what, content, signals, problem] of cases) {
      const pidFile = join(dir, 'bad.pid');
      await rm(pidFile, { force: true });
      if (content !== '') await writeFile(pidFile, content);
      events.length = 0;
      const reloader = reloaderOf(signals, events);
      reloader.rewritten('csi-bad', specWith(pidFile), {});
      await reloader.idle();
      t.match(
        events,
        [{ type: 'Warning', reason: 'CertificateReloadFailed', message: problem }],
        what,
      );
    }
    // A node that signals nothing (the publish refuses such a volume; this is the last guard).
    events.length = 0;
    const off = reloaderOf('off', events);
    off.rewritten(
      'csi-off',
      { ...specWith('/x'), reload: { signal: { name: 'SIGHUP' } } } as VolumeCertificateSpec,
      {},
    );
    await off.idle();
    t.match(events, [{ type: 'Warning', message: /reload signals are not enabled on this node$/ }]);
  },
);
