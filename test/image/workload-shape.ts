import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import { projectPath } from '../support/project-files.js';

/** How a manifest's DaemonSet or Deployment runs one container, read from deploy/manifests/. */
export interface WorkloadShape {
  /** The container's args, $(VAR) expanded from its env as kubelet does. */
  args: string[];
  /** Env var name → value, fieldRefs replaced by samples (FIELD_SAMPLES). */
  env: Record<string, string>;
  /** The container's volumeMounts, each with its hostPath and propagation. */
  mounts: { name: string; mountPath: string; hostPath: string; bidirectional: boolean }[];
  privileged: boolean;
  runAsUser: number | undefined;
  readOnlyRootFilesystem: boolean;
  /** The readiness probe's path and the container port it names. */
  readiness: { path: string; port: number };
  /** Pod spec terminationGracePeriodSeconds, Kubernetes' default 30 when unset. */
  gracePeriodSeconds: number;
}

/** Values kubelet puts in for fieldRef env vars. */
export const FIELD_SAMPLES: Record<string, string> = {
  'spec.nodeName': 'smoke-node',
  'metadata.name': 'cert-csi-smoke-pod',
  'metadata.namespace': 'cert-csi',
};

interface Container {
  name: string;
  args?: string[];
  env?: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
  ports?: { name?: string; containerPort: number }[];
  readinessProbe?: { httpGet?: { path?: string; port?: number | string } };
  securityContext?: { privileged?: boolean; runAsUser?: number; readOnlyRootFilesystem?: boolean };
  volumeMounts?: { name: string; mountPath: string; mountPropagation?: string }[];
}
interface Workload {
  kind: string;
  spec: {
    template: {
      spec: {
        terminationGracePeriodSeconds?: number;
        containers: Container[];
        volumes?: { name: string; hostPath?: { path: string } }[];
      };
    };
  };
}

/** Reads container containerName of the DaemonSet or Deployment in deploy/manifests/<fileName>. */
export async function workloadShape(
  fileName: string,
  containerName: string,
): Promise<WorkloadShape> {
  const file = projectPath('deploy', 'manifests', fileName);
  const docs = parseAllDocuments(await readFile(file, 'utf8')).map((d) => d.toJS() as Workload);
  const workload = docs.find(
    (d) =>
      (d?.kind === 'DaemonSet' || d?.kind === 'Deployment') &&
      d.spec.template.spec.containers.some((c) => c.name === containerName),
  );
  if (!workload) throw new Error(`${file}: no workload runs a container ${containerName}`);
  const pod = workload.spec.template.spec;
  const container = pod.containers.find((c) => c.name === containerName) as Container;

  const env: Record<string, string> = {};
  for (const e of container.env ?? []) {
    const fieldPath = e.valueFrom?.fieldRef?.fieldPath;
    if (e.value !== undefined) env[e.name] = e.value;
    else if (fieldPath && FIELD_SAMPLES[fieldPath]) env[e.name] = FIELD_SAMPLES[fieldPath];
    else throw new Error(`${file}: env ${e.name} has no value the smoke test can model`);
  }
  const args = (container.args ?? []).map((arg) =>
    arg.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (_whole, name: string) => {
      const value = env[name];
      if (value === undefined) throw new Error(`${file}: "${arg}" names undefined env ${name}`);
      return value;
    }),
  );
  const mounts = (container.volumeMounts ?? []).map((m) => {
    const hostPath = pod.volumes?.find((v) => v.name === m.name)?.hostPath?.path;
    if (!hostPath) throw new Error(`${file}: volume ${m.name} is not a hostPath`);
    return {
      name: m.name,
      mountPath: m.mountPath,
      hostPath,
      bidirectional: m.mountPropagation === 'Bidirectional',
    };
  });
  const probe = container.readinessProbe?.httpGet;
  const port =
    typeof probe?.port === 'string'
      ? container.ports?.find((p) => p.name === probe.port)?.containerPort
      : probe?.port;
  if (!probe?.path || port === undefined) throw new Error(`${file}: no readiness httpGet probe`);
  const security = container.securityContext;
  return {
    args,
    env,
    mounts,
    privileged: security?.privileged === true,
    runAsUser: security?.runAsUser,
    readOnlyRootFilesystem: security?.readOnlyRootFilesystem === true,
    readiness: { path: probe.path, port },
    gracePeriodSeconds: pod.terminationGracePeriodSeconds ?? 30,
  };
}

/** args with `--name=value` replaced (or added when absent). */
export function withFlag(args: readonly string[], name: string, value: string): string[] {
  const prefix = `--${name}=`;
  const kept = args.filter((a) => !a.startsWith(prefix) && a !== `--${name}`);
  return [...kept, `${prefix}${value}`];
}
