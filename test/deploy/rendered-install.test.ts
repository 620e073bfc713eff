import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import t from 'tap';
import { parseAllDocuments } from 'yaml';
import { observabilityAddresses } from '../../src/cli/common/observability-flags.js';
import { CONTROLLER_OPTIONS } from '../../src/cli/controller/controller-flags.js';
import { NODE_OPTIONS } from '../../src/cli/node/node-flags.js';
import { WEBHOOK_OPTIONS, webhookSettings } from '../../src/cli/webhook/webhook-flags.js';
import { runCli } from '../support/cli-process.js';
import { projectPath } from '../support/project-files.js';

// The one-command install (issue 26): `kubectl apply -k deploy/` and the rendered
// deploy/cert-csi.yaml hold the same objects as deploy/manifests/, in install order, and every
// image, flag, port and probe of every container in them is one the CLI has. manifests.test.ts
// checks the objects themselves in depth; this file checks what an install actually applies.

const execFileAsync = promisify(execFile);
const RENDERED = projectPath('deploy', 'cert-csi.yaml');
const OUR_IMAGE = 'ghcr.io/cert-csi/cert-csi';

interface KubeDoc {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  [field: string]: unknown;
}
interface Probe {
  httpGet?: { path?: string; port?: number | string; scheme?: string };
}
interface Container {
  name: string;
  image: string;
  args?: string[];
  env?: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
  ports?: { name?: string; containerPort: number }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
}
interface Workload extends KubeDoc {
  spec: { template: { spec: { containers: Container[] } } };
}

/** `kubectl kustomize DIR`: kubectl is part of the toolchain CI runs on (README, Testing). */
async function kustomize(dir: string): Promise<string> {
  try {
    const { stdout } = await execFileAsync('kubectl', ['kustomize', projectPath(dir)], {
      maxBuffer: 16 * 1024 * 1024,
    });
    return stdout;
  } catch (err) {
    throw new Error(`kubectl kustomize ${dir} failed (is kubectl installed?): ${String(err)}`);
  }
}

function objects(text: string): KubeDoc[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as KubeDoc | null)
    .filter((d): d is KubeDoc => d !== null);
}

const keyOf = (d: KubeDoc) =>
  `${d.kind} ${d.metadata.namespace ? `${d.metadata.namespace}/` : ''}${d.metadata.name}`;

async function listedSources(): Promise<{ file: string; docs: KubeDoc[] }[]> {
  const dir = projectPath('deploy', 'manifests');
  const kustomization = objects(await readFile(join(dir, 'kustomization.yaml'), 'utf8'))[0] as {
    resources?: string[];
  } & KubeDoc;
  return Promise.all(
    (kustomization.resources ?? []).map(async (file) => ({
      file,
      docs: objects(await readFile(join(dir, file), 'utf8')),
    })),
  );
}

t.test('deploy/cert-csi.yaml is exactly `kubectl kustomize deploy/`', async (t) => {
  const rendered = await readFile(RENDERED, 'utf8');
  const header = rendered.match(/^(#.*\n)+/)?.[0] ?? '';
  t.match(header, /npm run deploy:render/, 'its header says how it is made');
  t.ok(
    rendered.slice(header.length) === (await kustomize('deploy')),
    'deploy/cert-csi.yaml is out of date: run `npm run deploy:render` and commit it',
  );
});

t.test('the install applies every listed manifest unchanged, in install order', async (t) => {
  const rendered = objects(await readFile(RENDERED, 'utf8'));
  const sources = await listedSources();
  t.same(
    rendered.map(keyOf),
    sources.flatMap((s) => s.docs.map(keyOf)),
    'the objects of the listed files, in their order (sortOptions fifo)',
  );
  const byKey = new Map(rendered.map((d) => [keyOf(d), d]));
  for (const doc of sources.flatMap((s) => s.docs)) {
    t.same(byKey.get(keyOf(doc)), doc, `${keyOf(doc)} as written in deploy/manifests`);
  }
  // Namespace, CRDs, RBAC, CSIDriver, controller, webhook, DaemonSet, bootstrap CA.
  const order = sources.map((s) => s.file);
  t.same(order, [
    'namespace.yaml',
    'crds.yaml',
    'rbac-node.yaml',
    'rbac-controller.yaml',
    'rbac-webhook.yaml',
    'csidriver.yaml',
    'controller.yaml',
    'webhook.yaml',
    'daemonset.yaml',
    'bootstrap-ca.yaml',
  ]);
  const kinds = rendered.map((d) => d.kind);
  t.equal(kinds[0], 'Namespace', 'the namespace first');
  t.ok(
    kinds.lastIndexOf('CustomResourceDefinition') < kinds.indexOf('ClusterIssuer'),
    'the CRDs before any object of theirs',
  );
});

/** The Go duration or port number of `--flag=value` in a sidecar's args. */
function sidecarFlag(c: Container, flag: string): string | undefined {
  return c.args?.find((a) => a.startsWith(`--${flag}=`))?.slice(flag.length + 3);
}

/** The port a probe or Service names, resolved against the container's ports. */
function portNumber(c: Container, port: number | string | undefined): number | undefined {
  return typeof port === 'string' ? c.ports?.find((p) => p.name === port)?.containerPort : port;
}

// Values kubelet puts in for fieldRef env vars; any plausible value will do.
const FIELD_SAMPLES: Record<string, string> = {
  'spec.nodeName': 'node-1',
  'metadata.name': 'cert-csi-webhook-6d4b9-x2kq7',
  'metadata.namespace': 'cert-csi',
};

/** $(VAR) in args, as kubelet expands it from the container's env. */
function expanded(c: Container): string[] {
  const env = new Map<string, string>();
  for (const e of c.env ?? []) {
    const value = e.value ?? FIELD_SAMPLES[e.valueFrom?.fieldRef?.fieldPath ?? ''];
    if (value === undefined) throw new Error(`${c.name}: env ${e.name} has no value to model`);
    env.set(e.name, value);
  }
  return (c.args ?? []).map((a) =>
    a.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (whole, name: string) => env.get(name) ?? whole),
  );
}

/** What each cert-csi subcommand serves on which port, from its parsed flags. */
function served(c: Container): { command: string; flags: string[]; ports: Map<number, string[]> } {
  const [command = '', ...rest] = expanded(c);
  const ports = new Map<number, string[]>();
  const add = (port: number | undefined, paths: string[]) => {
    if (port !== undefined) ports.set(port, [...(ports.get(port) ?? []), ...paths]);
  };
  const flags = rest.map((a) => a.replace(/=.*$/, ''));
  switch (command) {
    case 'node':
    case 'controller': {
      const options = command === 'node' ? NODE_OPTIONS : CONTROLLER_OPTIONS;
      const { values } = parseArgs({ args: rest, options });
      const addresses = observabilityAddresses(values);
      add(addresses.metrics?.port, ['/metrics']);
      add(addresses.health?.port, ['/livez', '/readyz']);
      break;
    }
    case 'webhook': {
      const { values } = parseArgs({ args: rest, options: WEBHOOK_OPTIONS });
      add(webhookSettings(values, {}).port, ['/livez', '/readyz', '/validate', '/mutate']);
      break;
    }
    default:
      throw new Error(`${c.name}: unknown subcommand ${command}`);
  }
  return { command, flags, ports };
}

t.test(
  'every container of the install runs an image, flags, ports and probes that exist',
  async (t) => {
    const pkg = JSON.parse(await readFile(projectPath('package.json'), 'utf8')) as {
      version: string;
    };
    const workloads = objects(await readFile(RENDERED, 'utf8')).filter(
      (d): d is Workload => d.kind === 'Deployment' || d.kind === 'DaemonSet',
    );
    t.same(workloads.map((w) => w.metadata.name).sort(), [
      'cert-csi-controller',
      'cert-csi-node',
      'cert-csi-webhook',
    ]);
    const helps = new Map<string, string>();
    for (const workload of workloads) {
      const containers = workload.spec.template.spec.containers;
      // The livenessprobe sidecar serves /healthz on its --health-port, for the pod.
      const sidecarPorts = new Map<number, string[]>();
      for (const c of containers) {
        const port = sidecarFlag(c, 'health-port');
        if (port) sidecarPorts.set(Number(port), ['/healthz']);
      }
      for (const c of containers) {
        const where = `${workload.metadata.name}/${c.name}`;
        if (!c.image.startsWith(`${OUR_IMAGE}:`)) {
          t.match(
            c.image,
            /^registry\.k8s\.io\/sig-storage\/[a-z-]+:v\d+\.\d+\.\d+$/,
            `${where}: a Kubernetes CSI sidecar at a pinned release`,
          );
          continue;
        }
        t.equal(c.image, `${OUR_IMAGE}:${pkg.version}`, `${where}: this version's image`);
        const { command, flags, ports } = served(c);
        let help = helps.get(command);
        if (help === undefined) {
          const result = await runCli([command, '--help']);
          t.equal(result.code, 0, `cert-csi ${command} --help`);
          help = result.stdout;
          helps.set(command, help);
        }
        for (const flag of flags)
          t.match(help, flag, `${where}: ${flag} is in \`${command} --help\``);
        for (const p of c.ports ?? []) {
          t.ok(
            ports.has(p.containerPort) || sidecarPorts.has(p.containerPort),
            `${where}: port ${p.name} (${p.containerPort}) is one a flag binds`,
          );
        }
        for (const [kind, probe] of [
          ['liveness', c.livenessProbe],
          ['readiness', c.readinessProbe],
        ] as const) {
          const get = probe?.httpGet;
          t.ok(get, `${where}: a ${kind} probe`);
          const port = portNumber(c, get?.port);
          t.ok(port, `${where}: its ${kind} port ${get?.port} is declared`);
          const paths = ports.get(port ?? -1) ?? sidecarPorts.get(port ?? -1) ?? [];
          t.ok(
            paths.includes(get?.path ?? ''),
            `${where}: ${kind} ${get?.path} is served on ${port}`,
          );
          // Only the webhook serves TLS: its probes must say so, the others must not.
          t.equal(get?.scheme === 'HTTPS', command === 'webhook', `${where}: ${kind} scheme`);
        }
      }
    }
  },
);

t.test('the variants leave out what they say and keep the rest', async (t) => {
  const full = objects(await kustomize('deploy')).map(keyOf);
  const withoutWebhook = objects(await kustomize('deploy/variants/without-webhook')).map(keyOf);
  const webhookObjects = full.filter((k) => /cert-csi-webhook/.test(k));
  t.ok(webhookObjects.length >= 10, 'the webhook has its Deployment, Service, RBAC, configs');
  t.same(
    withoutWebhook,
    full.filter((k) => !webhookObjects.includes(k)),
    'without-webhook: everything but the webhook, in the same order',
  );
  t.ok(withoutWebhook.includes('Deployment cert-csi/cert-csi-controller'), 'the controller stays');
  t.ok(
    withoutWebhook.includes('ClusterRole cert-csi-controller:approve'),
    "the controller's approver keeps its approve permission",
  );

  const withCertManager = objects(await kustomize('deploy/variants/cert-manager'));
  t.same(
    withCertManager.map(keyOf),
    [
      'Namespace cert-csi',
      'ServiceAccount cert-csi/cert-csi-node',
      'ClusterRole cert-csi-node',
      'ClusterRoleBinding cert-csi-node',
      'CSIDriver csi.cert-manager.io',
      'DaemonSet cert-csi/cert-csi-node',
    ],
    "cert-manager: only the node plugin, cert-manager's csi-driver replaced",
  );
  const rendered = new Map(objects(await readFile(RENDERED, 'utf8')).map((d) => [keyOf(d), d]));
  for (const doc of withCertManager) {
    t.same(doc, rendered.get(keyOf(doc)), `${keyOf(doc)} as in the full install`);
  }
});
