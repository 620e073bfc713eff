// The image smoke test (issue 26): builds the Dockerfile from this checkout with podman and
// runs the image as deploy/manifests/daemonset.yaml runs it (same args, same hostPath mounts
// with the same propagation, privileged, root, read-only root filesystem), then drives it
// through its CSI socket from a second container as kubelet would. Run by .ci/run after
// `npm test` (node build/test/image/image-smoke.js); see test/image/README.md.
//
// Not a tap test: it needs root, podman and minutes of CPU, so `npm test` does not run it.
// It prints one line per check and, last, "image-smoke: N passed, N failed" for .ci/run.
import { randomUUID } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { Test } from 'tap';
import type { CertificateRequest } from '../../src/api/certificate-request.js';
import { findMount, type MountInfo, parseMountInfo } from '../../src/volume/mountinfo.js';
import {
  type Cluster,
  CONTROLLER_TOKEN,
  NODE_TOKEN,
  POD_NAMESPACE,
  startCluster,
} from '../support/cluster-harness.js';
import { until } from '../support/eventually.js';
import { projectPath, projectRoot } from '../support/project-files.js';
import { command, mustRun, podman } from './podman.js';
import { type WorkloadShape, withFlag, workloadShape } from './workload-shape.js';

const INSTALL = [
  'podman',
  'buildah',
  'runc',
  'debootstrap',
  'uidmap',
  'fuse-overlayfs',
  'slirp4netns',
  'netavark',
  'aardvark-dns',
  'conmon',
  'iptables',
];
// Generous: the machine is shared, and a plugin start loads the CSI proto and makes a CA.
const READY_TIMEOUT_MS = 90_000;
const BUILD_TIMEOUT_MS = 20 * 60_000;
const CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';
const TMPFS_LOG = 'reusing mounted tmpfs';
const DISK_WARNING = 'keys are stored on disk';
// slirp4netns with allow_host_loopback: the host's 127.0.0.1, where the fake API server listens.
const HOST_LOOPBACK = '10.0.2.2';
const HOST_LOOPBACK_NETWORK = 'slirp4netns:allow_host_loopback=true';

const started = performance.now();
const seconds = (since: number) => ((performance.now() - since) / 1000).toFixed(1);
const run = randomUUID().slice(0, 8);
// A tag of this run's own: another checkout's run on the same machine builds its own image
// (sharing the layer cache) and cannot swap the image under this one's containers.
const IMAGE = `localhost/cert-csi:smoke-${run}`;
let passed = 0;
let failed = 0;
const timings: string[] = [];

function cacheDir(): string {
  if (process.env.CERT_CSI_CI_CACHE) return process.env.CERT_CSI_CI_CACHE;
  return process.getuid?.() === 0
    ? '/var/cache/cert-csi-ci'
    : join(homedir(), '.cache/cert-csi-ci');
}

/** The host side of the DaemonSet's hostPaths, all under one rshared bind mount. */
interface Host {
  root: string;
  shape: WorkloadShape;
  /** hostPath → the dir standing in for it here. */
  path(hostPath: string): string;
}

/** podman run's flags for the plugin as the DaemonSet runs it, with these host dirs. */
function pluginRunFlags(
  host: Host,
  name: string,
  extraVolumes: string[],
  network = 'none',
): string[] {
  const { shape } = host;
  const flags = ['--name', name, '--network', network];
  if (shape.runAsUser !== undefined) flags.push('--user', String(shape.runAsUser));
  if (shape.privileged) flags.push('--privileged');
  if (shape.readOnlyRootFilesystem) flags.push('--read-only');
  for (const m of shape.mounts) {
    // A Bidirectional mountPropagation is rshared on both sides: the plugin's mounts reach
    // the host (kubelet, the next plugin container) and the host's reach the plugin.
    flags.push('-v', `${host.path(m.hostPath)}:${m.mountPath}${m.bidirectional ? ':rshared' : ''}`);
  }
  for (const volume of extraVolumes) flags.push('-v', volume);
  for (const [key, value] of Object.entries(shape.env)) flags.push('--env', `${key}=${value}`);
  return flags;
}

/**
 * The DaemonSet's args in embedded mode: there is no API server here, so the plugin signs with
 * its embedded CA (state in /var/lib/cert-csi/state) instead of creating CertificateRequests.
 * Every other flag (endpoint, driver, data root and its medium, probes, log level) is the
 * manifest's, but --reload-signals, which embedded mode refuses.
 */
function pluginArgs(shape: WorkloadShape, medium?: string): string[] {
  // --reload-signals belongs to Kubernetes mode (embedded mode signals by PID file only).
  let args = withFlag(
    shape.args.filter((a) => a !== '--reload-signals'),
    'mode',
    'embedded',
  );
  args = withFlag(args, 'state-dir', '/var/lib/cert-csi/state');
  if (medium) args = withFlag(args, 'data-root-medium', medium);
  return args;
}

function flagOf(args: readonly string[], name: string): string {
  const value = args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  if (value === undefined) throw new Error(`the DaemonSet passes no --${name}`);
  return value;
}

async function containerMounts(name: string): Promise<MountInfo[]> {
  return parseMountInfo(await podman(['exec', name, 'cat', '/proc/self/mountinfo']));
}

async function hostMounts(): Promise<MountInfo[]> {
  return parseMountInfo(await readFile('/proc/self/mountinfo', 'utf8'));
}

async function logsOf(name: string): Promise<string> {
  const result = await command('podman', ['logs', name]);
  return result.stdout + result.stderr;
}

async function waitReady(shape: WorkloadShape, name: string): Promise<void> {
  const { path, port } = shape.readiness;
  const probe = `fetch("http://127.0.0.1:${port}${path}").then((r) => process.exit(r.status === 200 ? 0 : 1), () => process.exit(2))`;
  try {
    await until(
      async () => {
        const state = await command('podman', ['inspect', '--format', '{{.State.Running}}', name]);
        if (state.stdout.trim() !== 'true') throw new Error('the plugin container stopped');
        const result = await command('podman', ['exec', name, 'node', '-e', probe]);
        if (result.code === 0) return true;
        await delay(500);
        return false;
      },
      { what: `${name} ${path} on :${port}`, timeoutMs: READY_TIMEOUT_MS },
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; its log:\n${(await logsOf(name)).slice(-3000)}`);
  }
}

async function startPlugin(host: Host, name: string, args: string[], state: string) {
  const flags = pluginRunFlags(host, name, [`${state}:/var/lib/cert-csi/state`]);
  await podman(['run', '-d', ...flags, IMAGE, ...args]);
  await waitReady(host.shape, name);
}

/** A second container on the plugin's socket dir, as kubelet calls the plugin. */
async function cli(host: Host, pluginDir: string, args: string[]): Promise<string> {
  const socketMount = host.shape.mounts.find((m) => m.name === 'plugin-dir');
  if (!socketMount) throw new Error('the DaemonSet has no plugin-dir mount');
  return podman([
    'run',
    '--rm',
    '--network',
    'none',
    '--read-only',
    '--user',
    '0',
    '-v',
    `${pluginDir}:${socketMount.mountPath}`,
    IMAGE,
    ...args,
    '--endpoint',
    host.shape.env.CSI_ENDPOINT ?? '',
  ]);
}

/** A pod's volume target as kubelet lays it out, created up to its parent as kubelet does. */
async function podTarget(host: Host, podsDir: string) {
  const uid = randomUUID();
  const inContainer = `${podsDir}/${uid}/volumes/kubernetes.io~csi/tls/mount`;
  const onHost = join(host.path(podsDir), uid, 'volumes/kubernetes.io~csi/tls/mount');
  await mkdir(join(onHost, '..'), { recursive: true });
  return { uid, inContainer, onHost, volumeId: `csi-smoke-${uid}` };
}

async function publish(
  host: Host,
  pluginDir: string,
  target: Awaited<ReturnType<typeof podTarget>>,
  options: string[] = ['--attr', 'issuer-name=embedded-ca', '--attr', 'issuer-kind=ClusterIssuer'],
) {
  await cli(host, pluginDir, [
    'publish',
    '--volume-id',
    target.volumeId,
    '--target',
    target.inContainer,
    '--pod-uid',
    target.uid,
    '--pod-name',
    'smoke',
    '--attr',
    'dns-names=smoke.example.com',
    ...options,
  ]);
}

async function serialOf(file: string): Promise<string> {
  return (await mustRun('openssl', ['x509', '-noout', '-serial', '-in', file])).trim();
}

async function stopWithin(name: string, graceSeconds: number): Promise<number> {
  const begin = performance.now();
  await podman(['stop', '-t', String(graceSeconds), name], (graceSeconds + 30) * 1000);
  const elapsed = (performance.now() - begin) / 1000;
  const code = (await podman(['inspect', '--format', '{{.State.ExitCode}}', name])).trim();
  // podman sends SIGKILL once the grace period is over: exit 137, or a stop that took it all.
  if (code !== '0') {
    throw new Error(`exited ${code} after SIGTERM; its log:\n${(await logsOf(name)).slice(-3000)}`);
  }
  if (elapsed >= graceSeconds)
    throw new Error(`took ${elapsed.toFixed(1)} s, the grace period is ${graceSeconds} s`);
  return elapsed;
}

function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

type Step = [name: string, body: () => Promise<string | undefined>];

async function runSteps(steps: Step[]): Promise<void> {
  let broken: string | undefined;
  for (const [name, body] of steps) {
    if (broken) {
      failed++;
      console.log(`not ok ${passed + failed} - ${name} (not run: "${broken}" failed)`);
      continue;
    }
    const begin = performance.now();
    try {
      const note = await body();
      passed++;
      console.log(
        `ok ${passed + failed} - ${name}${note ? `: ${note}` : ''} (${seconds(begin)} s)`,
      );
    } catch (err) {
      failed++;
      broken = name;
      console.log(`not ok ${passed + failed} - ${name}: ${(err as Error).message}`);
    }
  }
}

async function havePodman(): Promise<boolean> {
  return (await command('podman', ['--version'])).code === 0;
}

const NODE = `cert-csi-smoke-${run}-node`;
const NODE2 = `cert-csi-smoke-${run}-node-restarted`;
const DISK = `cert-csi-smoke-${run}-disk`;
const CONTROLLER = `cert-csi-smoke-${run}-controller`;
const KUBE_NODE = `cert-csi-smoke-${run}-kube-node`;
// startCluster hands its clean-up to a tap Test's teardown; this script is no tap test, so it
// keeps them and runs them in cleanUp.
const clusterTeardowns: (() => unknown)[] = [];
const teardownOnly = {
  teardown: (fn: () => unknown) => clusterTeardowns.push(fn),
} as unknown as Test;
const cache = cacheDir();
let host: Host | undefined;
let runtimeImage = '';
let buildImage = '';

async function cleanUp(): Promise<void> {
  await command('podman', [
    'rm',
    '--force',
    '--time',
    '0',
    NODE,
    NODE2,
    DISK,
    CONTROLLER,
    KUBE_NODE,
  ]);
  for (const teardown of clusterTeardowns.splice(0)) await teardown();
  // Only the tag goes: the layers stay as the next build's cache.
  await command('podman', ['untag', IMAGE, IMAGE]);
  if (!host) return;
  // The plugin's tmpfs and bind mounts propagated here: unmount them all, then the dir.
  const umount = await command('umount', ['--recursive', host.root]);
  if (umount.code !== 0) await command('umount', ['--recursive', '--lazy', host.root]);
  await rm(host.root, { recursive: true, force: true });
}

/** A kubeconfig for token whose server is the fake API server as a slirp4netns container sees it. */
async function containerKubeconfig(cluster: Cluster, token: string, file: string): Promise<string> {
  const text = await readFile(await cluster.kubeconfigFile(token), 'utf8');
  await writeFile(file, text.replaceAll('http://127.0.0.1:', `http://${HOST_LOOPBACK}:`));
  // The controller runs as user 65532; the token is a test value of this fake cluster only.
  await chmod(file, 0o644);
  return file;
}

async function main(): Promise<void> {
  const shape = await workloadShape('daemonset.yaml', 'cert-csi');
  const dataRoot = flagOf(shape.args, 'data-root');
  const podsDir = shape.mounts.find((m) => m.name === 'pods-mount-dir')?.mountPath ?? '';
  const pluginHostDir = shape.mounts.find((m) => m.name === 'plugin-dir')?.hostPath ?? '';
  let target: Awaited<ReturnType<typeof podTarget>>;
  let cluster: Cluster | undefined;
  let controllerShape: WorkloadShape | undefined;
  let serial = '';

  console.log(`image-smoke: the plugin runs as ${projectPath('deploy/manifests/daemonset.yaml')}`);
  console.log(`image-smoke: args ${pluginArgs(shape).join(' ')}`);
  console.log(
    "image-smoke: checks 4-13 run it with --mode=embedded (no API server); 14-15 with the manifest's args against a fake API server",
  );

  await runSteps([
    [
      'podman is installed and can run containers',
      async () => {
        if (!(await havePodman())) {
          assert(process.getuid?.() === 0, 'podman is missing and only root can install it');
          console.log(`image-smoke: installing ${INSTALL.join(' ')}`);
          await mustRun(
            'apt-get',
            ['install', '-y', '--no-install-recommends', ...INSTALL],
            600_000,
          );
        }
        const info = await podman(['info', '--format', '{{.Host.OCIRuntime.Name}}']);
        return `runtime ${info.trim()}`;
      },
    ],
    [
      'the local base images are made or reused (cached by a hash of their recipe)',
      async () => {
        console.log('image-smoke: making or reusing the bases (minutes, once per machine)');
        const begin = performance.now();
        const out = await mustRun(projectPath('test/image/base-image.sh'), [], BUILD_TIMEOUT_MS);
        [runtimeImage = '', buildImage = ''] = out.trim().split(/\s+/);
        timings.push(`base ${seconds(begin)} s`);
        return `${runtimeImage}, ${buildImage}`;
      },
    ],
    [
      'the Dockerfile builds from this checkout',
      async () => {
        const begin = performance.now();
        const version = JSON.parse(await readFile(projectPath('package.json'), 'utf8')).version;
        const npmCache = join(cache, 'npm');
        await mkdir(npmCache, { recursive: true });
        const volumes = ['-v', `${npmCache}:/root/.npm`];
        // npm reaches the registry through a proxy only the host's CA bundle trusts.
        if ((await stat(CA_BUNDLE).catch(() => undefined))?.isFile()) {
          volumes.push('-v', `${CA_BUNDLE}:${CA_BUNDLE}:ro`);
        }
        await podman(
          [
            'build',
            '--layers',
            '--tag',
            IMAGE,
            '--build-arg',
            `BUILD_IMAGE=${buildImage}`,
            '--build-arg',
            `RUNTIME_IMAGE=${runtimeImage}`,
            '--build-arg',
            `VERSION=${version}`,
            ...volumes,
            projectRoot,
          ],
          BUILD_TIMEOUT_MS,
        );
        timings.push(`build ${seconds(begin)} s`);
        const labels = JSON.parse(
          await podman(['image', 'inspect', '--format', '{{json .Labels}}', IMAGE]),
        ) as Record<string, string>;
        assert(
          labels['org.opencontainers.image.version'] === version,
          `version label ${labels['org.opencontainers.image.version']}, package.json ${version}`,
        );
        for (const label of ['source', 'licenses']) {
          assert(labels[`org.opencontainers.image.${label}`], `no ${label} label`);
        }
        const user = (
          await podman(['image', 'inspect', '--format', '{{.Config.User}}', IMAGE])
        ).trim();
        assert(
          user !== '' && !user.startsWith('0'),
          `the image's default user is ${user || 'root'}`,
        );
        return `${IMAGE}, version ${version}, default user ${user}`;
      },
    ],
    [
      'the plugin starts with the DaemonSet args and mounts and passes its readiness probe',
      async () => {
        const root = await mkdtemp(join(tmpdir(), 'cert-csi-image-smoke-'));
        host = { root, shape, path: (p) => join(root, 'host', p) };
        // One rshared mount over everything, as a node's /var/lib is: podman refuses rshared
        // volumes whose source is not on a shared mount.
        await mustRun('mount', ['--bind', root, root]);
        await mustRun('mount', ['--make-rshared', root]);
        for (const m of shape.mounts) await mkdir(host.path(m.hostPath), { recursive: true });
        await mkdir(join(root, 'state'), { recursive: true });
        await startPlugin(host, NODE, pluginArgs(shape), join(root, 'state'));
        return `${shape.readiness.path} on :${shape.readiness.port} answers 200`;
      },
    ],
    [
      'the data root is a tmpfs, seen by the host through the Bidirectional mount',
      async () => {
        const inside = findMount(await containerMounts(NODE), dataRoot);
        assert(inside?.fsType === 'tmpfs', `in the container ${dataRoot} is ${inside?.fsType}`);
        const onHost = findMount(await hostMounts(), host?.path(dataRoot) ?? '');
        assert(onHost?.fsType === 'tmpfs', `on the host the data root is ${onHost?.fsType}`);
        return `tmpfs ${inside.superOptions.filter((o) => /^(size|mode)=/.test(o)).join(',')}`;
      },
    ],
    [
      'a second container publishes a volume through the socket',
      async () => {
        if (!host) throw new Error('no host dirs');
        target = await podTarget(host, podsDir);
        await publish(host, host.path(pluginHostDir), target);
        return target.inContainer;
      },
    ],
    [
      'the files verify: openssl verify against ca.crt, tls.key belongs to tls.crt, generation.json names it as generation 1',
      async () => {
        const file = (n: string) => join(target.onHost, n);
        const verify = await mustRun('openssl', [
          'verify',
          '-CAfile',
          file('ca.crt'),
          file('tls.crt'),
        ]);
        assert(verify.trim().endsWith(': OK'), verify);
        const fromKey = await mustRun('openssl', ['pkey', '-pubout', '-in', file('tls.key')]);
        const fromCert = await mustRun('openssl', [
          'x509',
          '-noout',
          '-pubkey',
          '-in',
          file('tls.crt'),
        ]);
        assert(fromKey === fromCert, 'tls.key is not the key of tls.crt');
        serial = await serialOf(file('tls.crt'));
        // `serial=<HEX>` as openssl prints it; the file holds the same hex.
        const generation = JSON.parse(await readFile(file('generation.json'), 'utf8'));
        assert(
          generation.generation === 1 &&
            generation.reason === 'issued' &&
            `serial=${generation.serial}` === serial,
          `generation.json: ${JSON.stringify(generation)}, certificate ${serial}`,
        );
        return serial;
      },
    ],
    [
      'tls.key is on a tmpfs, mounted read-only at the target in the container and on the host',
      async () => {
        const inside = findMount(await containerMounts(NODE), target.inContainer);
        assert(
          inside?.fsType === 'tmpfs',
          `target in the container is ${inside?.fsType ?? 'not a mount'}`,
        );
        assert(inside.options.includes('ro'), `target mounted ${inside.options.join(',')}`);
        const onHost = findMount(await hostMounts(), target.onHost);
        assert(
          onHost?.fsType === 'tmpfs',
          `target on the host is ${onHost?.fsType ?? 'not a mount'}`,
        );
        assert(onHost.options.includes('ro'), `host target mounted ${onHost.options.join(',')}`);
        return `${inside.fsType}, ro`;
      },
    ],
    [
      'SIGTERM with a volume published stops the plugin cleanly within the grace period',
      async () => {
        const elapsed = await stopWithin(NODE, shape.gracePeriodSeconds);
        const onHost = findMount(await hostMounts(), target.onHost);
        assert(onHost?.fsType === 'tmpfs', "the pod's files stay mounted while the plugin is down");
        return `exit 0 in ${elapsed.toFixed(1)} s of ${shape.gracePeriodSeconds} s`;
      },
    ],
    [
      'a new plugin container takes the volume back without issuing again',
      async () => {
        if (!host) throw new Error('no host dirs');
        await startPlugin(host, NODE2, pluginArgs(shape), join(host.root, 'state'));
        const logs = await logsOf(NODE2);
        assert(logs.includes(TMPFS_LOG), `no "${TMPFS_LOG}" in the log:\n${logs.slice(-2000)}`);
        const after = await serialOf(join(target.onHost, 'tls.crt'));
        assert(after === serial, `${after} after the restart, ${serial} before`);
        const inside = findMount(await containerMounts(NODE2), target.inContainer);
        assert(inside?.fsType === 'tmpfs', 'the new container sees the target mount');
        return `same ${serial}`;
      },
    ],
    [
      'unpublish unmounts the target, in the container and on the host',
      async () => {
        if (!host) throw new Error('no host dirs');
        const out = await cli(host, host.path(pluginHostDir), [
          'unpublish',
          '--volume-id',
          target.volumeId,
          '--target',
          target.inContainer,
        ]);
        assert(out.includes('unpublished'), out);
        assert(
          !findMount(await containerMounts(NODE2), target.inContainer),
          'still mounted inside',
        );
        assert(!findMount(await hostMounts(), target.onHost), 'still mounted on the host');
        return out.trim();
      },
    ],
    [
      'SIGTERM stops the restarted plugin cleanly within the grace period',
      async () => {
        const elapsed = await stopWithin(NODE2, shape.gracePeriodSeconds);
        return `exit 0 in ${elapsed.toFixed(1)} s`;
      },
    ],
    [
      'with --data-root-medium=disk tls.key is on the node disk and a warning is logged',
      async () => {
        if (!host) throw new Error('no host dirs');
        // A fresh data root: the first one's tmpfs is still mounted on the host, and the
        // plugin rightly keeps a tmpfs it finds there.
        const diskRoot = join(host.root, 'disk-data');
        const diskState = join(host.root, 'disk-state');
        await mkdir(diskRoot, { recursive: true });
        await mkdir(diskState, { recursive: true });
        const diskHost: Host = {
          ...host,
          path: (p) => (p === dataRoot ? diskRoot : (host?.path(p) ?? '')),
        };
        await startPlugin(diskHost, DISK, pluginArgs(shape, 'disk'), diskState);
        const logs = await logsOf(DISK);
        assert(
          logs.includes(DISK_WARNING),
          `no "${DISK_WARNING}" in the log:\n${logs.slice(-2000)}`,
        );
        const diskTarget = await podTarget(host, podsDir);
        await publish(host, host.path(pluginHostDir), diskTarget);
        const inside = findMount(await containerMounts(DISK), diskTarget.inContainer);
        assert(inside, 'the target is not a mount');
        assert(inside.fsType !== 'tmpfs', 'tls.key is on a tmpfs although the medium is disk');
        const verify = await mustRun('openssl', [
          'verify',
          '-CAfile',
          join(diskTarget.onHost, 'ca.crt'),
          join(diskTarget.onHost, 'tls.crt'),
        ]);
        assert(verify.trim().endsWith(': OK'), verify);
        await stopWithin(DISK, shape.gracePeriodSeconds);
        return `${inside.fsType}, warned "${DISK_WARNING}"`;
      },
    ],
    [
      'Kubernetes mode: cert-csi controller runs as controller.yaml runs it and becomes ready',
      async () => {
        if (!host) throw new Error('no host dirs');
        // A fake API server on the host enforcing the manifests' RBAC, with a CA Issuer.
        cluster = await startCluster(teardownOnly);
        await cluster.seedIssuer();
        controllerShape = await workloadShape('controller.yaml', 'cert-csi-controller');
        const kubeconfig = await containerKubeconfig(
          cluster,
          CONTROLLER_TOKEN,
          join(host.root, 'controller-kubeconfig'),
        );
        const flags = ['--name', CONTROLLER, '--network', HOST_LOOPBACK_NETWORK];
        if (controllerShape.runAsUser !== undefined) {
          flags.push('--user', String(controllerShape.runAsUser));
        }
        if (controllerShape.readOnlyRootFilesystem) flags.push('--read-only');
        flags.push('--cap-drop', 'ALL', '--security-opt', 'no-new-privileges');
        flags.push('-v', `${kubeconfig}:/kube/config:ro`);
        for (const [key, value] of Object.entries(controllerShape.env)) {
          flags.push('--env', `${key}=${value}`);
        }
        // The manifest's args; --kubeconfig stands in for the in-cluster service account.
        const args = [...controllerShape.args, '--kubeconfig=/kube/config'];
        await podman(['run', '-d', ...flags, IMAGE, ...args]);
        await waitReady(controllerShape, CONTROLLER);
        return `user ${controllerShape.runAsUser}, ${controllerShape.args.join(' ')}`;
      },
    ],
    [
      'Kubernetes mode: the DaemonSet args unchanged publish a volume signed through a CertificateRequest',
      async () => {
        if (!host || !cluster) throw new Error('no cluster');
        const kubeRoot = join(host.root, 'kube-data');
        await mkdir(kubeRoot, { recursive: true });
        const kubeHost: Host = {
          ...host,
          path: (p) => (p === dataRoot ? kubeRoot : (host?.path(p) ?? '')),
        };
        const kubeconfig = await containerKubeconfig(
          cluster,
          NODE_TOKEN,
          join(host.root, 'node-kubeconfig'),
        );
        const args = [...shape.args, '--kubeconfig=/kube/config'];
        const flags = pluginRunFlags(
          kubeHost,
          KUBE_NODE,
          [`${kubeconfig}:/kube/config:ro`],
          HOST_LOOPBACK_NETWORK,
        );
        await podman(['run', '-d', ...flags, IMAGE, ...args]);
        await waitReady(shape, KUBE_NODE);
        const kubeTarget = await podTarget(host, podsDir);
        await publish(host, host.path(pluginHostDir), kubeTarget, [
          '--pod-namespace',
          POD_NAMESPACE,
          '--attr',
          'issuer-name=ca',
          '--attr',
          'issuer-kind=Issuer',
        ]);
        const verify = await mustRun('openssl', [
          'verify',
          '-CAfile',
          join(kubeTarget.onHost, 'ca.crt'),
          join(kubeTarget.onHost, 'tls.crt'),
        ]);
        assert(verify.trim().endsWith(': OK'), verify);
        const onHost = findMount(await hostMounts(), kubeTarget.onHost);
        assert(onHost?.fsType === 'tmpfs', `target on the host is ${onHost?.fsType}`);
        const requests = (await cluster.requests()).filter(
          (r: CertificateRequest) => r.metadata.namespace === POD_NAMESPACE,
        );
        assert(requests.length === 1, `${requests.length} CertificateRequests in ${POD_NAMESPACE}`);
        const conditions = requests[0]?.status?.conditions ?? [];
        for (const type of ['Approved', 'Ready']) {
          assert(
            conditions.some((c) => c.type === type && c.status === 'True'),
            `the request is not ${type}: ${JSON.stringify(conditions)}`,
          );
        }
        await stopWithin(KUBE_NODE, shape.gracePeriodSeconds);
        await stopWithin(CONTROLLER, controllerShape?.gracePeriodSeconds ?? 30);
        return `${requests[0]?.metadata.name} approved and signed by the controller container`;
      },
    ],
  ]);
}

try {
  await main();
} catch (err) {
  failed++;
  console.log(`not ok - image smoke test: ${(err as Error).message}`);
} finally {
  await cleanUp().catch((err: Error) =>
    console.log(`image-smoke: clean-up failed: ${err.message}`),
  );
}
if (failed > 0 && passed === 0) {
  console.log('');
  console.log(
    '!!!!! image-smoke: NOTHING RAN: podman or the image build does not work here. !!!!!',
  );
  console.log(
    '!!!!! The image is untested; this counts as a failure.                         !!!!!',
  );
}
console.log(`image-smoke: wall time ${seconds(started)} s (${timings.join(', ')}); cache ${cache}`);
console.log(`image-smoke: ${passed} passed, ${failed} failed`);
process.exitCode = failed > 0 ? 1 : 0;
