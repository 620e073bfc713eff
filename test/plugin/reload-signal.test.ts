import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { rm, writeFile } from 'node:fs/promises';
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

// Signals found through the pod's cgroups (Kubernetes mode, cgroup v1 and v2 layouts, the pod
// from the API server) are tested in test/kubernetes/cluster-reload-signal.test.ts.

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
