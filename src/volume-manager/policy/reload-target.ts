/** A process as /proc shows it: its pid, its parent's, and its `cgroup` file. */
export interface ProcessEntry {
  pid: number;
  ppid: number;
  /** The lines of /proc/<pid>/cgroup (`<id>:<controllers>:<path>`, v1 and v2 alike). */
  cgroup: string;
}

/** One container of the pod to signal: its name and runtime id as the pod's status gives it. */
export interface ContainerRef {
  name: string;
  /** `<runtime>://<id>` (containerStatuses[].containerID); empty while it has none. */
  containerID: string;
}

/** The processes to signal, or why none may be. */
export type ReloadTarget = { ok: true; pids: number[] } | { ok: false; problem: string };

/**
 * The container's id without its runtime scheme (`containerd://abc` -> `abc`); undefined when
 * it is no such id (empty, or characters a cgroup name of kubelet's never holds).
 */
export function runtimeId(containerID: string): string | undefined {
  const id = containerID.slice(containerID.indexOf('://') + 3);
  return containerID.includes('://') && /^[0-9a-zA-Z]{12,128}$/.test(id) ? id : undefined;
}

// kubelet names a pod's cgroup `pod<uid>` (cgroupfs driver) or, with the systemd driver,
// `kubepods[-<qos>]-pod<uid with _ for ->.slice`; the container's cgroup inside it is the bare
// id (cgroupfs) or `<runtime prefix>-<id>.scope` (systemd: cri-containerd-, crio-, docker-).
function isPodSegment(segment: string, podUid: string): boolean {
  if (segment === `pod${podUid}`) return true;
  const systemd = /^kubepods(?:-[a-z]+)?-pod([0-9a-fA-F_]+)\.slice$/.exec(segment);
  return systemd?.[1] === podUid.replaceAll('-', '_');
}

function isContainerSegment(segment: string, id: string): boolean {
  if (segment === id) return true;
  const scope = /^(?:cri-containerd|crio|docker)-([0-9a-zA-Z]+)\.scope$/.exec(segment);
  return scope?.[1] === id || segment === `crio-${id}`;
}

/** True when one of the cgroup lines puts the process in container id of the pod podUid. */
export function inContainer(cgroup: string, podUid: string, id: string): boolean {
  for (const line of cgroup.split('\n')) {
    // The path is everything after the second colon (it may hold colons itself).
    const parts = line.split(':');
    if (parts.length < 3) continue;
    const segments = parts.slice(2).join(':').split('/');
    for (let i = 0; i + 1 < segments.length; i++) {
      if (isPodSegment(segments[i] as string, podUid)) {
        if (isContainerSegment(segments[i + 1] as string, id)) return true;
      }
    }
  }
  return false;
}

/**
 * The init process of each container to signal: the one process of the container's cgroup
 * whose parent is outside it. The pod's uid and the container's exact id must both be in the
 * cgroup path, so a process of another pod (or a container whose id merely starts alike) is
 * never chosen. Nothing is signalled when anything is unclear: a pod of several containers
 * and none named, a named container the pod does not have, a container without an id, no
 * process, or two candidates.
 */
export function reloadTargets(input: {
  processes: readonly ProcessEntry[];
  podUid: string;
  containers: readonly ContainerRef[];
  /** reload-container; every container of the pod when it has only one. */
  container?: string | undefined;
}): ReloadTarget {
  const { processes, podUid, containers } = input;
  if (podUid === '') return { ok: false, problem: 'the volume does not name its pod uid' };
  let chosen: readonly ContainerRef[];
  if (input.container !== undefined) {
    chosen = containers.filter((c) => c.name === input.container);
    if (chosen.length === 0) {
      return { ok: false, problem: `the pod has no running container "${input.container}"` };
    }
  } else if (containers.length === 1) {
    chosen = containers;
  } else {
    return {
      ok: false,
      problem:
        containers.length === 0
          ? 'the pod has no running container'
          : `the pod has ${containers.length} containers: name one with reload-container`,
    };
  }
  const pids: number[] = [];
  for (const container of chosen) {
    const id = runtimeId(container.containerID);
    if (id === undefined) {
      return { ok: false, problem: `container "${container.name}" has no container id yet` };
    }
    const members = processes.filter((p) => inContainer(p.cgroup, podUid, id));
    const inside = new Set(members.map((p) => p.pid));
    const inits = members.filter((p) => !inside.has(p.ppid));
    if (inits.length !== 1) {
      return {
        ok: false,
        problem:
          inits.length === 0
            ? `no process of container "${container.name}" found`
            : `container "${container.name}" has ${inits.length} candidate init processes`,
      };
    }
    pids.push((inits[0] as ProcessEntry).pid);
  }
  return { ok: true, pids };
}
