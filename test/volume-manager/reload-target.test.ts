import t from 'tap';
import {
  type ProcessEntry,
  reloadTargets,
  runtimeId,
} from '../../src/volume-manager/policy/reload-target.js';

const UID = '0a99d1e4-5b1c-4c8a-9f0e-2f6d7f9b1c11';
const UID_ = UID.replaceAll('-', '_');
const OTHER_UID = '7f00d1e4-5b1c-4c8a-9f0e-2f6d7f9b1c11';
const ID = 'a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0a1b2';
// Another container whose id starts like ID's.
const SIMILAR = `${ID.slice(0, 40)}ffffffffffffffffffffffff`;

const v2Systemd = (uid: string, id: string, qos = 'besteffort') =>
  `0::/kubepods.slice/kubepods-${qos}.slice/kubepods-${qos}-pod${uid.replaceAll('-', '_')}.slice/cri-containerd-${id}.scope`;
const v1Cgroupfs = (uid: string, id: string) =>
  `12:pids:/kubepods/besteffort/pod${uid}/${id}\n11:memory:/kubepods/besteffort/pod${uid}/${id}\n0::/`;
const proc = (pid: number, ppid: number, cgroup: string): ProcessEntry => ({ pid, ppid, cgroup });
const containerd = (name: string, id: string) => ({ name, containerID: `containerd://${id}` });

t.test('the runtime id of a container id', async (t) => {
  t.equal(runtimeId(`containerd://${ID}`), ID);
  t.equal(runtimeId(`cri-o://${ID}`), ID);
  t.equal(runtimeId(''), undefined, 'none yet');
  t.equal(runtimeId(ID), undefined, 'no scheme');
  t.equal(runtimeId('containerd://../../x'), undefined, 'not an id');
});

t.test('which process a reload signal goes to', async (t) => {
  const cases: Array<{
    name: string;
    processes: ProcessEntry[];
    containers?: Array<{ name: string; containerID: string }>;
    container?: string;
    uid?: string;
    want: unknown;
  }> = [
    {
      name: 'cgroup v2, systemd driver: the init process, not its child',
      processes: [
        proc(1, 0, '0::/init.scope'),
        proc(40, 1, v2Systemd(UID, ID)),
        proc(41, 40, v2Systemd(UID, ID)),
      ],
      want: { ok: true, pids: [40] },
    },
    {
      name: 'guaranteed QoS (no QoS slice name)',
      processes: [
        proc(40, 1, `0::/kubepods.slice/kubepods-pod${UID_}.slice/cri-containerd-${ID}.scope`),
      ],
      want: { ok: true, pids: [40] },
    },
    {
      name: 'cgroup v1, cgroupfs driver',
      processes: [proc(50, 3, v1Cgroupfs(UID, ID)), proc(51, 50, v1Cgroupfs(UID, ID))],
      want: { ok: true, pids: [50] },
    },
    {
      name: 'cri-o and docker scopes, systemd driver',
      processes: [
        proc(
          60,
          2,
          `0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${UID_}.slice/crio-${ID}.scope`,
        ),
      ],
      want: { ok: true, pids: [60] },
    },
    {
      name: 'cri-o, cgroupfs driver',
      processes: [proc(61, 2, `3:cpu:/kubepods/burstable/pod${UID}/crio-${ID}`)],
      want: { ok: true, pids: [61] },
    },
    {
      name: 'a process in a sub-cgroup of the container is still in it',
      processes: [proc(62, 2, `${v2Systemd(UID, ID)}/sub`)],
      want: { ok: true, pids: [62] },
    },
    {
      name: 'the same container id under another pod is not ours',
      processes: [proc(70, 1, v2Systemd(OTHER_UID, ID))],
      want: { ok: false, problem: 'no process of container "app" found' },
    },
    {
      name: 'a container whose id starts alike is not ours',
      processes: [proc(71, 1, v2Systemd(UID, SIMILAR)), proc(72, 1, v1Cgroupfs(UID, SIMILAR))],
      want: { ok: false, problem: 'no process of container "app" found' },
    },
    {
      name: 'a similar id beside the real one: only the real one',
      processes: [proc(71, 1, v2Systemd(UID, SIMILAR)), proc(73, 1, v2Systemd(UID, ID))],
      want: { ok: true, pids: [73] },
    },
    {
      name: 'two candidate inits: nothing',
      processes: [proc(80, 1, v2Systemd(UID, ID)), proc(81, 2, v2Systemd(UID, ID))],
      want: { ok: false, problem: 'container "app" has 2 candidate init processes' },
    },
    {
      name: 'no container id yet',
      processes: [proc(40, 1, v2Systemd(UID, ID))],
      containers: [{ name: 'app', containerID: '' }],
      want: { ok: false, problem: 'container "app" has no container id yet' },
    },
    {
      name: 'several containers, none named',
      processes: [proc(40, 1, v2Systemd(UID, ID))],
      containers: [containerd('app', ID), containerd('sidecar', SIMILAR)],
      want: { ok: false, problem: 'the pod has 2 containers: name one with reload-container' },
    },
    {
      name: 'several containers, one named',
      processes: [proc(40, 1, v2Systemd(UID, ID)), proc(90, 1, v2Systemd(UID, SIMILAR))],
      containers: [containerd('app', ID), containerd('sidecar', SIMILAR)],
      container: 'sidecar',
      want: { ok: true, pids: [90] },
    },
    {
      name: 'a named container the pod does not have',
      processes: [proc(40, 1, v2Systemd(UID, ID))],
      container: 'web',
      want: { ok: false, problem: 'the pod has no running container "web"' },
    },
    {
      name: 'no container running',
      processes: [],
      containers: [],
      want: { ok: false, problem: 'the pod has no running container' },
    },
    {
      name: 'no pod uid',
      processes: [proc(40, 1, v2Systemd(UID, ID))],
      uid: '',
      want: { ok: false, problem: 'the volume does not name its pod uid' },
    },
    {
      name: 'lines that are no cgroup lines are skipped',
      processes: [proc(40, 1, `garbage\n${v2Systemd(UID, ID)}`)],
      want: { ok: true, pids: [40] },
    },
  ];
  for (const c of cases) {
    t.same(
      reloadTargets({
        processes: c.processes,
        podUid: c.uid ?? UID,
        containers: c.containers ?? [containerd('app', ID)],
        container: c.container,
      }),
      c.want,
      c.name,
    );
  }
});
