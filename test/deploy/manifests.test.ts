import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, posix } from 'node:path';
import { parseArgs } from 'node:util';
import t from 'tap';
import { parse, parseAllDocuments } from 'yaml';
import { type Certificate, CertificateKind } from '../../src/api/certificate.js';
import { CertificateRequestKind } from '../../src/api/certificate-request.js';
import { ClusterIssuerKind, type Issuer, IssuerKind, issuerTypeOf } from '../../src/api/issuer.js';
import { signerNameOfIssuer } from '../../src/api/issuer-signer-name.js';
import type { ResourceKind } from '../../src/api/meta.js';
import type {
  MutatingWebhookConfiguration,
  ValidatingWebhookConfiguration,
  WebhookCommon,
} from '../../src/api/webhook-configuration.js';
import { parseVolumeAttributes } from '../../src/attributes/volume-attributes.js';
import {
  failedIssuanceStatus,
  issuedStatus as issuedCertificateStatus,
} from '../../src/certificates/issuing-decision.js';
import { buildNextRequest } from '../../src/certificates/next-request-plan.js';
import { readinessStatus } from '../../src/certificates/readiness-status.js';
import { observabilityAddresses } from '../../src/cli/common/observability-flags.js';
import { CONTROLLER_OPTIONS } from '../../src/cli/controller/controller-flags.js';
import { loadManifests } from '../../src/cli/node/load-manifests.js';
import { NODE_DEFAULTS, NODE_MODES, NODE_OPTIONS } from '../../src/cli/node/node-flags.js';
import { WEBHOOK_OPTIONS, webhookSettings } from '../../src/cli/webhook/webhook-flags.js';
import { parseEndpoint } from '../../src/driver/endpoint.js';
import { failedStatus, issuedStatus } from '../../src/issuer/certificaterequests/request-status.js';
import { issuerReadiness } from '../../src/issuer/issuer-readiness.js';
import { POD_CERTIFICATE_NAMESPACES_ANNOTATION } from '../../src/issuer/podcertificaterequests/pod-certificate-policy.js';
import {
  TRUST_BUNDLE_LABEL,
  trustBundleNameOf,
} from '../../src/issuer/podcertificaterequests/trust-bundle-publisher.js';
import { LOG_LEVELS } from '../../src/observability/logger.js';
import { POD_CERTIFICATE_KEY_TYPES } from '../../src/pki/pod-certificate-key.js';
import { KEY_USAGE_NAMES } from '../../src/pki/usages.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { buildCertificateRequest } from '../../src/volume-manager/issuance/request-builder.js';
import { webhookConfigurationErrors } from '../fake-api-server/webhook-configurations.js';
import { projectRoot } from '../support/project-files.js';

// The manifests are the product's install path: this file checks that they agree with
// the flags, defaults and API kinds the code actually has, so a rename on either side
// fails here instead of in a cluster.

const repoRoot = projectRoot;
const deployDir = join(repoRoot, 'deploy/manifests');
const installGuide = join(repoRoot, 'deploy/README.md');

const NAMESPACE = 'cert-csi';
const EXAMPLE_NAMESPACE = 'default';
const CLUSTER_SCOPED_KINDS = new Set([
  'Namespace',
  'CSIDriver',
  'ClusterRole',
  'ClusterRoleBinding',
  'CustomResourceDefinition',
  'ClusterIssuer',
  'ValidatingWebhookConfiguration',
  'MutatingWebhookConfiguration',
]);

// Values kubelet substitutes for fieldRef env vars; any plausible value will do.
const FIELD_SAMPLES: Record<string, string> = {
  'spec.nodeName': 'node-1',
  'metadata.name': 'cert-csi-controller-6d4b9-x2kq7',
  'metadata.namespace': NAMESPACE,
};

interface Metadata {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
}
interface KubeDoc {
  apiVersion: string;
  kind: string;
  metadata: Metadata;
  [field: string]: unknown;
}
interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string } };
}
interface VolumeMount {
  name: string;
  mountPath: string;
  mountPropagation?: string;
}
interface Container {
  name: string;
  image?: string;
  args?: string[];
  env?: EnvVar[];
  ports?: { name?: string; containerPort: number }[];
  livenessProbe?: { httpGet?: { path?: string; port?: number | string; scheme?: string } };
  readinessProbe?: { httpGet?: { path?: string; port?: number | string; scheme?: string } };
  volumeMounts?: VolumeMount[];
  securityContext?: Record<string, unknown>;
}
interface Volume {
  name: string;
  hostPath?: { path: string; type?: string };
  csi?: { driver: string; readOnly?: boolean; volumeAttributes?: Record<string, string> };
}
interface PodSpec {
  serviceAccountName?: string;
  securityContext?: Record<string, unknown>;
  containers: Container[];
  volumes?: Volume[];
  tolerations?: unknown[];
}
interface Workload extends KubeDoc {
  spec: {
    replicas?: number;
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
  };
}
interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  resourceNames?: string[];
  verbs: string[];
}
interface Role extends KubeDoc {
  rules: PolicyRule[];
}
interface Binding extends KubeDoc {
  roleRef: { apiGroup: string; kind: string; name: string };
  subjects: { kind: string; name: string; namespace?: string }[];
}
interface CSIDriverDoc extends KubeDoc {
  spec: Record<string, unknown>;
}
interface Schema {
  type?: string;
  format?: string;
  enum?: unknown[];
  required?: string[];
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
}
interface CRDDoc extends KubeDoc {
  spec: {
    group: string;
    scope: 'Namespaced' | 'Cluster';
    names: { kind: string; plural: string; listKind?: string; shortNames?: string[] };
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      subresources?: { status?: object };
      additionalPrinterColumns?: { name: string; jsonPath: string }[];
      schema?: { openAPIV3Schema?: Schema };
    }[];
  };
}

interface Manifest {
  file: string;
  where: string;
  doc: KubeDoc;
}

async function loadDeployDir(): Promise<{ manifests: Manifest[]; problems: string[] }> {
  // kustomization.yaml says which files the install applies (test/deploy/rendered-install.test.ts).
  const files = (await readdir(deployDir))
    .filter((n) => /\.ya?ml$/.test(n) && n !== 'kustomization.yaml')
    .sort();
  const manifests: Manifest[] = [];
  const problems: string[] = [];
  for (const file of files) {
    const text = await readFile(join(deployDir, file), 'utf8');
    const docs = parseAllDocuments(text);
    // kubectl reads YAML 1.1, where yes/no/on/off are booleans and 0755 is octal; a
    // value that reads differently there would be applied differently than tested.
    const docs11 = parseAllDocuments(text, { version: '1.1' });
    docs.forEach((document, index) => {
      const where = `${file} document ${index + 1}`;
      for (const error of [...document.errors, ...document.warnings]) {
        problems.push(`${where}: ${error.message}`);
      }
      const value: unknown = document.toJS();
      if (value === null || value === undefined) return;
      if (JSON.stringify(value) !== JSON.stringify(docs11[index]?.toJS())) {
        problems.push(`${where}: reads differently as YAML 1.1 (kubectl); quote the value`);
      }
      const doc = value as Partial<KubeDoc>;
      if (typeof doc.apiVersion !== 'string' || typeof doc.kind !== 'string') {
        problems.push(`${where}: apiVersion and kind are required`);
      } else if (typeof doc.metadata?.name !== 'string' || doc.metadata.name === '') {
        problems.push(`${where}: metadata.name is required`);
      } else manifests.push({ file, where, doc: doc as KubeDoc });
    });
  }
  return { manifests, problems };
}

const { manifests, problems: parseProblems } = await loadDeployDir();

function named<T extends KubeDoc>(kind: string, name: string, file?: string): T {
  const found = manifests.filter(
    (m) => m.doc.kind === kind && m.doc.metadata.name === name && (!file || m.file === file),
  );
  if (found.length !== 1) {
    throw new Error(
      `expected one ${kind} "${name}"${file ? ` in ${file}` : ''}, found ${found.length}`,
    );
  }
  return (found[0] as Manifest).doc as T;
}

function ofKind<T extends KubeDoc>(kind: string): T[] {
  return manifests.filter((m) => m.doc.kind === kind).map((m) => m.doc as T);
}

function container(workload: Workload, name: string): Container {
  const found = workload.spec.template.spec.containers.find((c) => c.name === name);
  if (!found) throw new Error(`${workload.metadata.name} has no container "${name}"`);
  return found;
}

function volume(workload: Workload, name: string): Volume {
  const found = workload.spec.template.spec.volumes?.find((v) => v.name === name);
  if (!found) throw new Error(`${workload.metadata.name} has no volume "${name}"`);
  return found;
}

function mountOf(c: Container, volumeName: string): VolumeMount | undefined {
  return c.volumeMounts?.find((m) => m.name === volumeName);
}

/** A container's args with $(VAR) replaced the way kubelet does, from the container's env. */
function expandedArgs(c: Container): string[] {
  const env = new Map<string, string>();
  for (const e of c.env ?? []) {
    const fieldPath = e.valueFrom?.fieldRef?.fieldPath;
    const value = e.value ?? (fieldPath ? FIELD_SAMPLES[fieldPath] : undefined);
    if (value === undefined) throw new Error(`${c.name}: env ${e.name} has no value we can model`);
    env.set(e.name, value);
  }
  return (c.args ?? []).map((arg) =>
    arg.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (_whole, name: string) => {
      const value = env.get(name);
      // kubelet would pass "$(NAME)" through literally: a typo, never intended.
      if (value === undefined) throw new Error(`${c.name}: "${arg}" names undefined env ${name}`);
      return value;
    }),
  );
}

/** `--flag=value` → value, for the sidecars, whose flags are not ours to parse. */
function flagValue(c: Container, flag: string): string | undefined {
  const prefix = `--${flag}=`;
  return c.args?.find((a) => a.startsWith(prefix))?.slice(prefix.length);
}

// parseArgs with strict: true, as the binary parses them: an unknown flag, a missing
// value or a stray positional throws, and the message names the flag.
function parseNodeArgs(c: Container) {
  const [command, ...rest] = expandedArgs(c);
  try {
    return { command, values: parseArgs({ args: rest, options: NODE_OPTIONS }).values };
  } catch (err) {
    throw new Error(`cert-csi node would refuse ${c.name}'s args: ${(err as Error).message}`);
  }
}

function parseControllerArgs(c: Container) {
  const [command, ...rest] = expandedArgs(c);
  try {
    return { command, values: parseArgs({ args: rest, options: CONTROLLER_OPTIONS }).values };
  } catch (err) {
    throw new Error(`cert-csi controller would refuse ${c.name}'s args: ${(err as Error).message}`);
  }
}

const daemonSet = (): Workload => named<Workload>('DaemonSet', 'cert-csi-node');
const controller = (): Workload => named<Workload>('Deployment', 'cert-csi-controller');
const webhook = (): Workload => named<Workload>('Deployment', 'cert-csi-webhook');
const PLUGIN = 'cert-csi';
const REGISTRAR = 'node-driver-registrar';
const LIVENESS = 'liveness-probe';

t.test('every file in deploy/manifests is valid YAML with complete objects', async (t) => {
  t.same(parseProblems, [], 'no YAML errors, warnings or incomplete documents');
  const files = new Set(manifests.map((m) => m.file));
  for (const file of [
    'namespace.yaml',
    'csidriver.yaml',
    'csidriver-token-request.yaml',
    'rbac-node.yaml',
    'rbac-controller.yaml',
    'daemonset.yaml',
    'controller.yaml',
    'rbac-webhook.yaml',
    'webhook.yaml',
    'crds.yaml',
    'bootstrap-ca.yaml',
    'example-pod.yaml',
  ]) {
    t.ok(files.has(file), `${file} holds at least one object`);
  }
});

t.test('objects are in cert-csi, examples in default, cluster-scoped ones in none', async (t) => {
  for (const { file, where, doc } of manifests) {
    const namespace = doc.metadata.namespace;
    if (CLUSTER_SCOPED_KINDS.has(doc.kind)) {
      t.equal(namespace, undefined, `${where}: ${doc.kind} is cluster-scoped`);
    } else {
      const expected = file.startsWith('example-') ? EXAMPLE_NAMESPACE : NAMESPACE;
      t.equal(namespace, expected, `${where}: ${doc.kind} ${doc.metadata.name}`);
    }
  }
  t.ok(named('Namespace', NAMESPACE), 'the cert-csi Namespace is created');
});

t.test('no object is defined twice, except the two alternative CSIDrivers', async (t) => {
  const seen = new Map<string, string>();
  for (const { where, doc } of manifests) {
    if (doc.kind === 'CSIDriver') continue;
    const key = `${doc.apiVersion}/${doc.kind} ${doc.metadata.namespace ?? ''}/${doc.metadata.name}`;
    t.notOk(seen.has(key), `${key} in ${where} is also in ${seen.get(key)}`);
    seen.set(key, where);
  }
});

t.test('the CSIDriver name is the driver name the plugin uses', async (t) => {
  for (const file of ['csidriver.yaml', 'csidriver-token-request.yaml']) {
    const drivers = manifests.filter((m) => m.file === file && m.doc.kind === 'CSIDriver');
    t.equal(drivers.length, 1, `${file} holds one CSIDriver`);
    t.equal(
      drivers[0]?.doc.metadata.name,
      NODE_DEFAULTS.driverName,
      `${file}: NODE_DEFAULTS.driverName`,
    );
  }
  const { values } = parseNodeArgs(container(daemonSet(), PLUGIN));
  t.equal(values['driver-name'], NODE_DEFAULTS.driverName, 'the DaemonSet passes the same name');
  const pod = named<KubeDoc & { spec: PodSpec }>('Pod', 'my-csi-app');
  t.equal(pod.spec.volumes?.[0]?.csi?.driver, NODE_DEFAULTS.driverName, 'the example pod uses it');
});

t.test('the CSIDriver asks for what the plugin needs', async (t) => {
  const plain = named<CSIDriverDoc>('CSIDriver', NODE_DEFAULTS.driverName, 'csidriver.yaml');
  t.equal(plain.spec.podInfoOnMount, true, 'podInfoOnMount: the request goes in the pod namespace');
  t.same(plain.spec.volumeLifecycleModes, ['Ephemeral'], 'inline volumes only');
  t.equal(plain.spec.attachRequired, false, 'inline volumes are never attached');
  t.equal(
    plain.spec.fsGroupPolicy,
    undefined,
    'API default: the plugin applies VOLUME_MOUNT_GROUP',
  );
  t.equal(plain.spec.tokenRequests, undefined, 'no tokens without --use-token-request');
  t.equal(plain.spec.requiresRepublish, undefined);

  const token = named<CSIDriverDoc>(
    'CSIDriver',
    NODE_DEFAULTS.driverName,
    'csidriver-token-request.yaml',
  );
  t.same(token.spec.tokenRequests, [{ audience: '', expirationSeconds: 3600 }]);
  t.equal(token.spec.requiresRepublish, true, 'tokens expire, so kubelet must republish');
  const { tokenRequests: _t, requiresRepublish: _r, ...rest } = token.spec;
  t.same(rest, plain.spec, 'otherwise the same driver');
  t.ok('use-token-request' in NODE_OPTIONS, 'the plugin has the --use-token-request flag');
  const header = await readFile(join(deployDir, 'csidriver-token-request.yaml'), 'utf8');
  t.match(header.split('apiVersion:')[0], /--use-token-request/, 'the file says when to use it');
});

t.test('the DaemonSet passes only flags `cert-csi node` accepts, with valid values', async (t) => {
  const plugin = container(daemonSet(), PLUGIN);
  const { command, values } = parseNodeArgs(plugin);
  t.equal(command, 'node', 'first arg is the subcommand');
  t.equal(values.mode, 'kubernetes', '--mode=kubernetes: a cluster has no embedded store');
  t.ok(
    (NODE_MODES as readonly string[]).includes(values.mode),
    `--mode is one of ${NODE_MODES.join(', ')}`,
  );
  t.ok((LOG_LEVELS as readonly string[]).includes(values['log-level']), '--log-level is a level');
  t.equal(values['node-id'], FIELD_SAMPLES['spec.nodeName'], '--node-id is the node name');
  t.equal(parseEndpoint(values.endpoint).kind, 'unix', '--endpoint is a unix socket');
  t.ok(isAbsolute(values['data-root']), '--data-root is absolute');
  t.equal(values.help, undefined);
});

t.test('the controller passes only flags `cert-csi controller` accepts', async (t) => {
  const deployment = controller();
  const main = deployment.spec.template.spec.containers[0] as Container;
  t.equal(deployment.spec.template.spec.containers.length, 1, 'one container');
  const { command, values } = parseControllerArgs(main);
  t.equal(command, 'controller', 'first arg is the subcommand');
  t.ok((LOG_LEVELS as readonly string[]).includes(values['log-level']), '--log-level is a level');
  t.equal(values.identity, FIELD_SAMPLES['metadata.name'], '--identity is the pod name');
  t.equal(values['leader-elect'], 'true', 'two replicas need leader election');
  t.ok((deployment.spec.replicas ?? 1) >= 2, 'a standby replica');
  t.equal(main.image, container(daemonSet(), PLUGIN).image, 'one image for node and controller');
  t.same(
    (main.ports ?? []).map((p) => p.name).sort(),
    ['health', 'http-metrics'],
    'only metrics and health are served',
  );
});

t.test('registrar, livenessprobe and plugin agree on the socket', async (t) => {
  const ds = daemonSet();
  const plugin = container(ds, PLUGIN);
  const registrar = container(ds, REGISTRAR);
  const liveness = container(ds, LIVENESS);
  const endpoint = parseEndpoint(parseNodeArgs(plugin).values.endpoint);
  if (endpoint.kind !== 'unix') throw new Error('the plugin endpoint must be a unix socket');
  t.equal(flagValue(registrar, 'csi-address'), endpoint.path, 'registrar --csi-address');
  t.equal(flagValue(liveness, 'csi-address'), endpoint.path, 'livenessprobe --csi-address');

  const pluginDir = volume(ds, 'plugin-dir');
  for (const c of [plugin, registrar, liveness]) {
    const mount = mountOf(c, 'plugin-dir');
    t.equal(mount?.mountPath, posix.dirname(endpoint.path), `${c.name} mounts plugin-dir there`);
  }
  const hostDir = pluginDir.hostPath?.path ?? '';
  t.equal(
    flagValue(registrar, 'kubelet-registration-path'),
    posix.join(hostDir, posix.basename(endpoint.path)),
    '--kubelet-registration-path is the socket as the host sees it',
  );
  t.match(hostDir, /^\/var\/lib\/kubelet\/plugins\//, 'under kubelet plugins dir');
  t.ok(hostDir.includes(NODE_DEFAULTS.driverName), 'the plugin dir is named after the driver');
  t.equal(pluginDir.hostPath?.type, 'DirectoryOrCreate');
  const registration = volume(ds, 'registration-dir');
  t.equal(registration.hostPath?.path, '/var/lib/kubelet/plugins_registry');
  t.equal(mountOf(registrar, 'registration-dir')?.mountPath, '/registration');
});

t.test('the liveness port is the one livenessprobe serves', async (t) => {
  const ds = daemonSet();
  const plugin = container(ds, PLUGIN);
  const healthPort = Number(flagValue(container(ds, LIVENESS), 'health-port'));
  const healthz = plugin.ports?.find((p) => p.name === 'healthz');
  t.equal(healthz?.containerPort, healthPort, 'healthz containerPort = --health-port');
  const probe = plugin.livenessProbe?.httpGet;
  t.equal(probe?.path, '/healthz');
  const port = probe?.port;
  const resolved =
    typeof port === 'string' ? plugin.ports?.find((p) => p.name === port)?.containerPort : port;
  t.equal(resolved, healthPort, 'the probe port resolves to --health-port');
});

// Metrics and health (issue 14): each probe names a path the process serves, on the port its
// flag binds, and the metrics port is the one --metrics-bind-address binds.
t.test('metrics and health: the probes and ports agree with the flags', async (t) => {
  const plugin = container(daemonSet(), PLUGIN);
  const main = controller().spec.template.spec.containers[0] as Container;
  for (const [c, values] of [
    [plugin, parseNodeArgs(plugin).values],
    [main, parseControllerArgs(main).values],
  ] as const) {
    const served = observabilityAddresses(values);
    t.equal(served.metrics?.port, 9402, `${c.name}: --metrics-bind-address parses to :9402`);
    t.equal(
      c.ports?.find((p) => p.name === 'http-metrics')?.containerPort,
      served.metrics?.port,
      `${c.name}: http-metrics is the metrics port`,
    );
    const health = served.health?.port;
    t.ok(health, `${c.name}: --health-probe-bind-address serves health`);
    const readiness = c.readinessProbe?.httpGet;
    t.equal(readiness?.path, '/readyz', `${c.name}: readiness is /readyz`);
    t.equal(containerPort(c, readiness?.port), health, `${c.name}: on the health port`);
    t.not(health, served.metrics?.port, `${c.name}: health on its own port`);
  }
  const liveness = main.livenessProbe?.httpGet;
  t.equal(liveness?.path, '/livez', 'controller liveness is /livez');
  t.equal(
    containerPort(main, liveness?.port),
    observabilityAddresses(parseControllerArgs(main).values).health?.port,
  );
  t.equal(
    plugin.livenessProbe?.httpGet?.path,
    '/healthz',
    'node liveness stays with livenessprobe',
  );
});

t.test('data root and pods dir are host paths with Bidirectional propagation', async (t) => {
  const ds = daemonSet();
  const plugin = container(ds, PLUGIN);
  const dataRoot = parseNodeArgs(plugin).values['data-root'];
  const dataMount = plugin.volumeMounts?.find((m) => m.mountPath === dataRoot);
  t.ok(dataMount, '--data-root is a volumeMount of the plugin');
  t.equal(dataMount?.mountPropagation, 'Bidirectional', 'its tmpfs must survive a restart');
  const dataVolume = volume(ds, dataMount?.name ?? '');
  const hostData = dataVolume.hostPath?.path ?? '';
  t.ok(isAbsolute(hostData), 'backed by a hostPath');
  t.notOk(/^\/tmp(\/|$)/.test(hostData), `${hostData} is not under /tmp (tmp cleaners)`);
  t.equal(hostData, dataRoot, 'the same path as on the host, so `cert-csi status` works there');
  // Keys on tmpfs: bind mode (auto is bind for root on Linux) with the tmpfs medium, whose
  // tmpfs goes over the hostPath and reaches the host through the Bidirectional mount above.
  const values = parseNodeArgs(plugin).values;
  t.equal(values['data-root-medium'], 'tmpfs', 'keys on a tmpfs, never on the node disk');
  t.ok(['auto', 'bind'].includes(values['mount-mode']), 'bind mounts: the plugin mounts');
  t.equal(plugin.securityContext?.runAsUser, 0, 'as root, so auto is bind and mount works');
  t.equal(dataVolume.hostPath?.type, 'DirectoryOrCreate', 'a fresh node gets the dir');
  const overlapping = (plugin.volumeMounts ?? []).filter(
    (m) =>
      m !== dataMount &&
      (dataRoot.startsWith(`${m.mountPath}/`) || m.mountPath.startsWith(`${dataRoot}/`)),
  );
  t.same(overlapping, [], 'no other mount above or inside the data root to shadow the tmpfs');

  const pods = volume(ds, 'pods-mount-dir');
  t.equal(pods.hostPath?.path, '/var/lib/kubelet/pods');
  t.equal(pods.hostPath?.type, 'Directory', 'never created: a wrong kubelet root must fail loudly');
  const podsMount = mountOf(plugin, 'pods-mount-dir');
  t.equal(podsMount?.mountPath, pods.hostPath?.path, 'target paths are host paths');
  t.equal(podsMount?.mountPropagation, 'Bidirectional', 'bind mounts must reach kubelet');
  t.equal(plugin.securityContext?.privileged, true, 'Bidirectional needs a privileged container');
  for (const c of ds.spec.template.spec.containers) {
    t.equal(c.securityContext?.readOnlyRootFilesystem, true, `${c.name}: read-only root`);
    if (c.name === PLUGIN) continue;
    t.equal(c.securityContext?.privileged, undefined, `${c.name}: not privileged`);
    t.equal(c.securityContext?.allowPrivilegeEscalation, false, `${c.name}: no escalation`);
    for (const m of c.volumeMounts ?? []) {
      t.equal(m.mountPropagation, undefined, `${c.name}: ${m.name} needs no propagation`);
    }
  }
  t.equal(ds.spec.template.spec.tolerations, undefined, 'no tolerations, as csi-driver');
});

t.test('workload selectors match their pod labels', async (t) => {
  for (const w of [daemonSet(), controller(), webhook()]) {
    for (const [key, value] of Object.entries(w.spec.selector.matchLabels)) {
      t.equal(w.spec.template.metadata.labels[key], value, `${w.metadata.name}: ${key}`);
    }
    t.same(
      w.spec.template.spec.securityContext?.seccompProfile,
      { type: 'RuntimeDefault' },
      `${w.metadata.name}: RuntimeDefault seccomp`,
    );
  }
  for (const w of [controller(), webhook()]) {
    const podSecurity = w.spec.template.spec.securityContext;
    t.equal(podSecurity?.runAsNonRoot, true, `${w.metadata.name} runs as non-root`);
    t.equal(podSecurity?.runAsUser, 65532);
  }
});

function bindingsFor(kind: 'ClusterRoleBinding' | 'RoleBinding', account: string, ns: string) {
  return ofKind<Binding>(kind).filter((b) =>
    b.subjects.some((s) => s.kind === 'ServiceAccount' && s.name === account && s.namespace === ns),
  );
}

function grants(role: Role, group: string, resource: string, verb: string, name?: string) {
  return role.rules.some(
    (r) =>
      r.apiGroups.includes(group) &&
      r.resources.includes(resource) &&
      r.verbs.includes(verb) &&
      (!r.resourceNames || (name !== undefined && r.resourceNames.includes(name))),
  );
}

t.test('each workload ServiceAccount exists and is bound to its ClusterRole', async (t) => {
  for (const w of [daemonSet(), controller(), webhook()]) {
    const account = w.spec.template.spec.serviceAccountName ?? 'default';
    const ns = w.metadata.namespace ?? '';
    t.ok(named('ServiceAccount', account), `${w.metadata.name}: ServiceAccount ${account} exists`);
    const bindings = bindingsFor('ClusterRoleBinding', account, ns);
    t.equal(
      bindings.filter((b) => b.roleRef.name === account).length,
      1,
      `${account} has one ClusterRoleBinding to its own ClusterRole`,
    );
    for (const binding of bindings) {
      const roleRef = binding.roleRef;
      t.equal(roleRef.kind, 'ClusterRole');
      t.equal(roleRef.apiGroup, 'rbac.authorization.k8s.io');
      t.ok(named<Role>('ClusterRole', roleRef.name), `ClusterRole ${roleRef.name} exists`);
    }
  }
});

t.test('RBAC rules are one group and one resource each, so each can be audited', async (t) => {
  for (const role of [...ofKind<Role>('ClusterRole'), ...ofKind<Role>('Role')]) {
    const seen = new Set<string>();
    for (const rule of role.rules) {
      const key = `${rule.apiGroups.join()}/${rule.resources.join()}/${rule.resourceNames ?? ''}`;
      t.equal(rule.apiGroups.length, 1, `${role.metadata.name}: ${key} has one apiGroup`);
      t.equal(rule.resources.length, 1, `${role.metadata.name}: ${key} has one resource`);
      t.notOk(rule.verbs.includes('*'), `${role.metadata.name}: ${key} names its verbs`);
      t.notOk(seen.has(key), `${role.metadata.name}: ${key} appears once`);
      seen.add(key);
    }
  }
});

t.test('the node plugin can manage CertificateRequests and nothing secret', async (t) => {
  const role = named<Role>('ClusterRole', 'cert-csi-node');
  const { group, plural } = CertificateRequestKind;
  for (const verb of ['create', 'delete', 'list', 'watch']) {
    t.ok(grants(role, group, plural, verb), `${verb} ${plural}`);
  }
  t.ok(grants(role, '', 'events', 'create'), 'create events');
  t.notOk(
    role.rules.some((r) => r.resources.includes('secrets')),
    'no access to secrets: pod identity comes from kubelet',
  );
  // Readiness gates and ${POD_IP}: the node's pods through one informer, never one by one.
  const podRules = role.rules.filter((r) => r.resources.includes('pods'));
  t.same(
    podRules.map((r) => [...r.verbs].sort()),
    [['list', 'watch']],
    'pods: list and watch only (an informer), no get, no writes',
  );
});

t.test('the controller can sign, update issuers and hold its Lease', async (t) => {
  const deployment = controller();
  const main = deployment.spec.template.spec.containers[0] as Container;
  const { values } = parseControllerArgs(main);
  const role = named<Role>('ClusterRole', 'cert-csi-controller');
  const { group } = CertificateRequestKind;
  t.ok(grants(role, group, 'certificaterequests', 'watch'), 'watch requests');
  t.ok(grants(role, group, 'certificaterequests/status', 'update'), 'update request status');
  for (const kind of [IssuerKind, ClusterIssuerKind]) {
    t.ok(grants(role, kind.group, kind.plural, 'watch'), `watch ${kind.plural}`);
    t.ok(grants(role, kind.group, `${kind.plural}/status`, 'update'), `${kind.plural}/status`);
  }
  t.ok(grants(role, '', 'secrets', 'watch'), 'watch CA Secrets');
  t.ok(grants(role, '', 'events', 'create'), 'create events');

  // The Certificate controllers: they read Certificates and write only their status, and
  // write the requests and Secrets that belong to them.
  for (const verb of ['get', 'list', 'watch']) {
    t.ok(grants(role, group, 'certificates', verb), `${verb} certificates`);
  }
  t.ok(grants(role, group, 'certificates/status', 'update'), 'update certificate status');
  for (const verb of ['create', 'update', 'patch', 'delete']) {
    t.notOk(
      grants(role, group, 'certificates', verb),
      `no ${verb} of certificates: spec is the user's`,
    );
  }
  for (const verb of ['create', 'delete']) {
    t.ok(grants(role, group, 'certificaterequests', verb), `${verb} certificaterequests`);
  }
  t.notOk(grants(role, group, 'certificaterequests', 'update'), 'requests are never rewritten');
  for (const verb of ['create', 'update', 'delete']) {
    // Any name: a Certificate's Secret is named by its user, the next-key Secret by
    // generateName, so the rule cannot carry resourceNames.
    t.ok(grants(role, '', 'secrets', verb, 'any-user-chosen-name'), `${verb} secrets`);
  }
  const secretRule = role.rules.find((r) => r.resources.includes('secrets'));
  t.equal(secretRule?.resourceNames, undefined, 'the secrets rule names no objects');
  const rbacText = await readFile(join(deployDir, 'rbac-controller.yaml'), 'utf8');
  t.match(rbacText, /generateName[\s\S]*resourceNames cannot/, 'the file says why');

  const leaseNamespace = values['leader-election-namespace'];
  const leaseName = values['leader-election-id'];
  t.equal(leaseNamespace, deployment.metadata.namespace, 'the Lease is next to the Deployment');
  t.ok(named('Namespace', leaseNamespace), `namespace ${leaseNamespace} is created`);
  t.ok(
    named('Namespace', values['cluster-resource-namespace']),
    '--cluster-resource-namespace is created',
  );
  const account = deployment.spec.template.spec.serviceAccountName ?? 'default';
  const roleBindings = bindingsFor('RoleBinding', account, deployment.metadata.namespace ?? '');
  t.equal(roleBindings.length, 1, `${account} has one RoleBinding`);
  const binding = roleBindings[0] as Binding;
  t.equal(binding.metadata.namespace, leaseNamespace, 'bound in the Lease namespace');
  t.equal(binding.roleRef.kind, 'Role');
  const leaseRole = ofKind<Role>('Role').find(
    (r) => r.metadata.name === binding.roleRef.name && r.metadata.namespace === leaseNamespace,
  );
  if (!leaseRole) throw new Error(`Role ${binding.roleRef.name} not in ${leaseNamespace}`);
  t.ok(grants(leaseRole, 'coordination.k8s.io', 'leases', 'create'), 'create the Lease');
  for (const verb of ['get', 'update']) {
    t.ok(
      grants(leaseRole, 'coordination.k8s.io', 'leases', verb, leaseName),
      `${verb} ${leaseName}`,
    );
    t.notOk(
      grants(leaseRole, 'coordination.k8s.io', 'leases', verb, 'some-other-lease'),
      `${verb} is limited to ${leaseName}`,
    );
  }
});

/** Where a schema is not structural (apiextensions v1 refuses such CRDs). */
function structuralProblems(schema: Schema, path: string): string[] {
  const problems: string[] = [];
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
  if (!schema.type && !schema['x-kubernetes-int-or-string'] && !preserve) {
    problems.push(`${path}: no type`);
  }
  if (schema.properties) {
    if (schema.type !== 'object') problems.push(`${path}: properties without type object`);
    if (schema.additionalProperties !== undefined) {
      problems.push(`${path}: properties and additionalProperties are exclusive`);
    }
    for (const [key, child] of Object.entries(schema.properties)) {
      problems.push(...structuralProblems(child, `${path}.${key}`));
    }
  }
  if (typeof schema.additionalProperties === 'object') {
    problems.push(...structuralProblems(schema.additionalProperties, `${path}.*`));
  }
  if (schema.items && schema.type !== 'array') problems.push(`${path}: items without type array`);
  if (schema.type === 'array') {
    if (!schema.items) problems.push(`${path}: array without items`);
    else problems.push(...structuralProblems(schema.items, `${path}[]`));
    if (schema['x-kubernetes-list-type'] === 'map') {
      for (const key of schema['x-kubernetes-list-map-keys'] ?? []) {
        if (!schema.items?.required?.includes(key)) {
          problems.push(`${path}: list map key ${key} must be required`);
        }
      }
    }
  }
  return problems;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Why the API server would reject or prune value: a small validator for the schema subset used. */
function schemaProblems(value: unknown, schema: Schema, path: string): string[] {
  const problems: string[] = [];
  if (schema.enum && !schema.enum.includes(value)) {
    problems.push(`${path}: ${JSON.stringify(value)} is not in the enum`);
  }
  switch (schema.type) {
    case 'object': {
      if (!isRecord(value)) return [`${path}: expected an object`];
      for (const key of schema.required ?? []) {
        if (value[key] === undefined) problems.push(`${path}.${key}: required`);
      }
      for (const [key, child] of Object.entries(value)) {
        if (child === undefined) continue;
        const extra = schema.additionalProperties;
        const sub = schema.properties?.[key] ?? (typeof extra === 'object' ? extra : undefined);
        if (sub) problems.push(...schemaProblems(child, sub, `${path}.${key}`));
        else if (!schema['x-kubernetes-preserve-unknown-fields']) {
          problems.push(`${path}.${key}: not in the schema, the API server would drop it`);
        }
      }
      break;
    }
    case 'array':
      if (!Array.isArray(value)) return [`${path}: expected an array`];
      value.forEach((item, i) => {
        if (schema.items) problems.push(...schemaProblems(item, schema.items, `${path}[${i}]`));
      });
      break;
    case 'string':
      if (typeof value !== 'string') return [`${path}: expected a string`];
      if (
        schema.format === 'byte' &&
        !/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(value)
      ) {
        problems.push(`${path}: not base64`);
      }
      if (
        schema.format === 'date-time' &&
        !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(value)
      ) {
        problems.push(`${path}: not an RFC 3339 date-time`);
      }
      break;
    case 'integer':
      if (!Number.isInteger(value)) problems.push(`${path}: expected an integer`);
      break;
    case 'boolean':
      if (typeof value !== 'boolean') problems.push(`${path}: expected a boolean`);
      break;
  }
  return problems;
}

function crdFor(kind: ResourceKind): CRDDoc {
  return named<CRDDoc>('CustomResourceDefinition', `${kind.plural}.${kind.group}`);
}

function storageSchema(kind: ResourceKind): Schema {
  const crd = crdFor(kind);
  const version = crd.spec.versions.find((v) => v.name === kind.version);
  const schema = version?.schema?.openAPIV3Schema;
  if (!schema) throw new Error(`${crd.metadata.name}: no schema for ${kind.version}`);
  return schema;
}

t.test('the CRDs match the kinds in src/api and are structural', async (t) => {
  const kinds = [CertificateKind, CertificateRequestKind, IssuerKind, ClusterIssuerKind];
  t.equal(ofKind('CustomResourceDefinition').length, kinds.length, 'one CRD per kind');
  for (const kind of kinds) {
    const crd = crdFor(kind);
    const name = crd.metadata.name;
    t.equal(crd.apiVersion, 'apiextensions.k8s.io/v1');
    t.equal(crd.spec.group, kind.group, `${name}: group`);
    t.equal(crd.spec.names.kind, kind.kind, `${name}: kind`);
    t.equal(crd.spec.names.plural, kind.plural, `${name}: plural`);
    t.equal(crd.spec.scope, kind.namespaced ? 'Namespaced' : 'Cluster', `${name}: scope`);
    t.equal(crd.spec.versions.length, 1, `${name}: one version`);
    const version = crd.spec.versions[0];
    t.equal(version?.name, kind.version, `${name}: version`);
    t.equal(version?.served, true, `${name}: served`);
    t.equal(version?.storage, true, `${name}: storage`);
    t.same(version?.subresources?.status, {}, `${name}: status subresource (updateStatus)`);
    const schema = storageSchema(kind);
    t.equal(schema.type, 'object', `${name}: root type object`);
    t.same(structuralProblems(schema, name), [], `${name}: structural schema`);
    const columns = (version?.additionalPrinterColumns ?? []).map((c) => c.name);
    for (const column of ['Ready', 'Age']) t.ok(columns.includes(column), `${name}: ${column}`);
  }
  const cr = crdFor(CertificateRequestKind);
  t.same(cr.spec.names.shortNames, ['cr', 'crs'], 'short names as cert-manager');
  const columns = (cr.spec.versions[0]?.additionalPrinterColumns ?? []).map((c) => c.name);
  for (const column of ['Approved', 'Denied', 'Issuer']) t.ok(columns.includes(column), column);
  const usages = storageSchema(CertificateRequestKind).properties?.spec?.properties?.usages;
  t.same(
    [...(usages?.items?.enum ?? [])].sort(),
    [...KEY_USAGE_NAMES].sort(),
    'the usages enum is exactly the names src/pki/usages.ts accepts',
  );
});

t.test("the Certificate CRD is cert-manager's own, unchanged", async (t) => {
  const crd = crdFor(CertificateKind) as CRDDoc & {
    metadata: { annotations?: Record<string, string> };
  };
  // The copy is byte for byte cert-manager's file (see the comment above it in crds.yaml);
  // these are the marks of the generated original that a reduced copy would have lost.
  t.equal(
    crd.metadata.annotations?.['controller-gen.kubebuilder.io/version'],
    'v0.21.0',
    'generated by controller-gen, as upstream',
  );
  t.equal(crd.metadata.labels, undefined, 'no labels of ours added');
  t.same(crd.spec.names.shortNames, ['cert', 'certs'], 'short names as cert-manager');
  const version = crd.spec.versions[0] as CRDDoc['spec']['versions'][0] & {
    selectableFields?: { jsonPath: string }[];
  };
  t.same(
    version.selectableFields?.map((f) => f.jsonPath),
    ['.spec.issuerRef.group', '.spec.issuerRef.kind', '.spec.issuerRef.name'],
    'the field selectors the fake API server offers for Certificates',
  );
  const schema = storageSchema(CertificateKind);
  t.same(schema.properties?.spec?.required, ['issuerRef', 'secretName']);
  const spec = schema.properties?.spec?.properties ?? {};
  for (const field of ['keystores', 'nameConstraints', 'otherNames', 'secretTemplate']) {
    t.ok(spec[field], `spec.${field} is kept, not reduced away`);
  }
  const usages = spec.usages?.items?.enum ?? [];
  t.same([...usages].sort(), [...KEY_USAGE_NAMES].sort(), 'the same usages as CertificateRequest');
});

const kubeletContext = {
  'csi.storage.k8s.io/ephemeral': 'true',
  'csi.storage.k8s.io/pod.name': 'my-csi-app',
  'csi.storage.k8s.io/pod.namespace': EXAMPLE_NAMESPACE,
  'csi.storage.k8s.io/pod.uid': '0b6f9a3e-3c1d-4b8e-9f53-2a1c7d8e9f01',
  'csi.storage.k8s.io/serviceAccount.name': 'default',
};

t.test('the example pod asks for a certificate the plugin accepts', async (t) => {
  const pod = named<KubeDoc & { spec: PodSpec }>('Pod', 'my-csi-app');
  const csi = pod.spec.volumes?.find((v) => v.csi)?.csi;
  t.equal(csi?.readOnly, true, 'the plugin only serves read-only volumes');
  const parsed = parseVolumeAttributes({ ...csi?.volumeAttributes, ...kubeletContext });
  if (!parsed.ok) throw new Error(`rejected: ${JSON.stringify(parsed.errors)}`);
  t.same(parsed.spec.dnsNames, ['my-csi-app.default.svc.cluster.local'], 'variables expand');
  t.equal(parsed.spec.issuerRef.kind, 'ClusterIssuer');
  const issuer = named<Issuer & KubeDoc>('ClusterIssuer', parsed.spec.issuerRef.name);
  t.equal(issuerTypeOf(issuer), 'ca', 'a CA issuer');
  const ca = named<Certificate & KubeDoc>('Certificate', 'cert-csi-ca');
  t.equal(
    issuer.spec.ca?.secretName,
    ca.spec.secretName,
    "bootstrap-ca.yaml's CA Certificate backs it",
  );
  t.equal(ca.metadata.namespace, NAMESPACE, 'in the cluster resource namespace of controller.yaml');
  t.equal(ca.spec.isCA, true);
  t.same(ca.spec.privateKey, { algorithm: 'ECDSA', size: 256 });
  const selfSigned = named<Issuer & KubeDoc>('ClusterIssuer', ca.spec.issuerRef.name);
  t.equal(issuerTypeOf(selfSigned), 'selfSigned', 'signed by a SelfSigned ClusterIssuer');
});

t.test('bootstrap-ca.yaml loads like any --manifests file and fits the CRD schemas', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'cert-csi-deploy-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const text = await readFile(join(deployDir, 'bootstrap-ca.yaml'), 'utf8');
  await writeFile(join(dir, 'bootstrap.yaml'), text);
  const store = new MemoryStore();
  t.equal(await loadManifests(store, dir), 3, 'three objects loaded');
  const ca = await store.get<Certificate>(CertificateKind, 'cert-csi-ca', NAMESPACE);
  t.same(
    schemaProblems(ca.spec, storageSchema(CertificateKind).properties?.spec ?? {}, 'spec'),
    [],
  );
  for (const name of ['cert-csi-selfsigned', 'cert-csi-ca']) {
    const loaded = await store.get<Issuer>(ClusterIssuerKind, name);
    const schema = storageSchema(ClusterIssuerKind).properties?.spec ?? {};
    t.same(schemaProblems(loaded.spec, schema, 'spec'), [], name);
  }
});

t.test('objects the code writes fit the CRD schemas: nothing is refused or pruned', async (t) => {
  const pod = named<KubeDoc & { spec: PodSpec }>('Pod', 'my-csi-app');
  const attributes = {
    ...pod.spec.volumes?.[0]?.csi?.volumeAttributes,
    'csi.cert-manager.io/duration': '24h',
    'csi.cert-manager.io/is-ca': 'true',
    'csi.cert-manager.io/key-usages': 'server auth,client auth,digital signature',
    ...kubeletContext,
  };
  const parsed = parseVolumeAttributes(attributes);
  if (!parsed.ok) throw new Error(`rejected: ${JSON.stringify(parsed.errors)}`);
  const request = buildCertificateRequest(parsed.spec, {
    name: 'my-csi-app-abcde',
    nodeId: 'node-1',
    volumeId: 'csi-0123',
    csrPem: '-----BEGIN CERTIFICATE REQUEST-----\n-----END CERTIFICATE REQUEST-----\n',
  });
  const crSchema = storageSchema(CertificateRequestKind).properties ?? {};
  t.same(schemaProblems(request.spec, crSchema.spec ?? {}, 'spec'), [], 'the node plugin spec');
  // What cert-manager's webhook adds when it is installed: the requester's identity.
  const withRequester = {
    ...request.spec,
    username: 'system:serviceaccount:cert-csi:cert-csi-node',
    uid: '5c1f0b7e-1111-4c2a-9e0d-3f6a2b7c8d90',
    groups: ['system:serviceaccounts', 'system:authenticated'],
    extra: { 'authentication.kubernetes.io/pod-name': ['cert-csi-node-abcde'] },
  };
  t.same(schemaProblems(withRequester, crSchema.spec ?? {}, 'spec'), [], 'a spec with requester');
  const now = new Date('2026-11-21T10:00:00.123Z');
  const issued = issuedStatus(request, 'leaf', 'ca', now).status;
  t.same(schemaProblems(issued, crSchema.status ?? {}, 'status'), [], 'an issued status');
  const failed = failedStatus(request, 'no', now).status;
  t.same(schemaProblems(failed, crSchema.status ?? {}, 'status'), [], 'a failed status');

  const issuer = named<Issuer & KubeDoc>('ClusterIssuer', 'cert-csi-ca');
  const readiness = issuerReadiness(issuer, () => undefined);
  const status = {
    conditions: [
      {
        ...readiness?.condition,
        lastTransitionTime: '2026-11-21T10:00:00Z',
        observedGeneration: 1,
      },
    ],
  };
  for (const kind of [IssuerKind, ClusterIssuerKind]) {
    const schema = storageSchema(kind).properties?.status ?? {};
    t.same(schemaProblems(status, schema, 'status'), [], `${kind.kind} readiness status`);
    const acme = { acme: { server: 'https://acme.example/directory' } };
    const spec = storageSchema(kind).properties?.spec ?? {};
    t.same(schemaProblems(acme, spec, 'spec'), [], `${kind.kind}: other issuer types are kept`);
  }
});

interface DockerStage {
  /** The FROM image with the global ARGs' defaults put in. */
  image: string;
  /** The FROM image as written. */
  written: string;
  name?: string;
  instructions: { keyword: string; text: string }[];
}

interface Dockerfile {
  /** ARGs before the first FROM (usable in FROM lines), with their defaults. */
  globalArgs: Map<string, string | undefined>;
  stages: DockerStage[];
}

function parseDockerfile(dockerfile: string): Dockerfile {
  const lines = dockerfile
    .replace(/\\\r?\n/g, ' ')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  const globalArgs = new Map<string, string | undefined>();
  const stages: DockerStage[] = [];
  for (const line of lines) {
    const [keyword = '', ...rest] = line.split(/\s+/);
    const text = rest.join(' ');
    if (keyword.toUpperCase() === 'FROM') {
      const match = /^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(text);
      if (!match?.[1]) throw new Error(`cannot read "${line}"`);
      const image = match[1].replace(
        /\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g,
        (_whole, name: string) => globalArgs.get(name) ?? '',
      );
      stages.push({
        image,
        written: match[1],
        ...(match[2] ? { name: match[2] } : {}),
        instructions: [],
      });
    } else if (stages.length === 0 && keyword.toUpperCase() === 'ARG') {
      const [name = '', value] = text.split('=', 2);
      globalArgs.set(name, value);
    } else {
      const stage = stages.at(-1);
      if (!stage) throw new Error(`"${line}" comes before the first FROM`);
      stage.instructions.push({ keyword: keyword.toUpperCase(), text });
    }
  }
  return { globalArgs, stages };
}

function dockerStages(dockerfile: string): DockerStage[] {
  return parseDockerfile(dockerfile).stages;
}

/** True when a stage's node_modules hold production dependencies only. */
function productionOnly(stage: DockerStage): boolean {
  const installs = stage.instructions.filter(
    (i) => i.keyword === 'RUN' && /\bnpm (ci|install|i|prune)\b/.test(i.text),
  );
  const last = installs.at(-1);
  return last !== undefined && /--omit[= ]dev|--production\b/.test(last.text);
}

function workdirAt(stage: DockerStage, index: number): string {
  let dir = '/';
  for (const i of stage.instructions.slice(0, index)) {
    if (i.keyword === 'WORKDIR') dir = posix.resolve(dir, i.text);
  }
  return dir;
}

t.test('the Dockerfile builds the real entry point and ships production deps only', async (t) => {
  const stages = dockerStages(await readFile(join(repoRoot, 'Dockerfile'), 'utf8'));
  t.ok(stages.length >= 2, 'multi-stage: the compiler stays out of the image');
  const final = stages.at(-1) as DockerStage;

  for (const stage of stages) {
    const node = /^node:(\d+)[-.]/.exec(stage.image);
    if (!node) {
      t.ok(
        stages.some((s) => s.name === stage.image),
        `${stage.image} is an earlier stage`,
      );
      continue;
    }
    const major = Number(node[1]);
    t.ok(major >= 20 && major % 2 === 0, `${stage.image}: an LTS (even) major >= 20`);
  }
  t.equal(final.image, stages[0]?.image, 'runtime and build use the same Node');

  for (const i of final.instructions) {
    if (i.keyword === 'RUN' && /\bnpm (ci|install|i)\b/.test(i.text)) {
      t.match(i.text, /--omit[= ]dev/, `final stage "${i.text}" skips dev dependencies`);
    }
    const from = /--from=(\S+)/.exec(i.text)?.[1];
    if (i.keyword !== 'COPY' || !from || !i.text.includes('node_modules')) continue;
    const source = stages.find((s) => s.name === from);
    t.ok(source && productionOnly(source), `node_modules come from a production-only stage`);
  }

  const pkg = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as {
    bin: Record<string, string>;
    scripts: Record<string, string>;
  };
  const buildConfigName = /tsc -[bp] (\S+)/.exec(pkg.scripts.build ?? '')?.[1] ?? '';
  t.ok(buildConfigName, 'npm run build is tsc -b <config>');
  const buildConfig = JSON.parse(await readFile(join(repoRoot, buildConfigName), 'utf8')) as {
    compilerOptions: { rootDir: string; outDir: string };
  };
  const { rootDir, outDir } = buildConfig.compilerOptions;
  const emitted = posix
    .join(outDir, posix.relative(rootDir, 'src/cli/main.ts'))
    .replace(/\.ts$/, '.js');
  // bin is the clone's shim (builds dist/ when stale), which runs what tsc emits for main.ts.
  const shim = await readFile(join(repoRoot, pkg.bin['cert-csi'] ?? ''), 'utf8');
  const entryPath = emitted
    .split('/')
    .map((part) => `'${part}'`)
    .join(', ');
  t.ok(
    shim.includes(`join(root, ${entryPath})`),
    `the package.json bin runs what tsc emits for src/cli/main.ts (${emitted})`,
  );
  t.ok(
    stages.some((s) =>
      s.instructions.some((i) => i.keyword === 'RUN' && /npm run build/.test(i.text)),
    ),
    'a stage runs npm run build',
  );

  const entry = final.instructions.find((i) => i.keyword === 'ENTRYPOINT');
  const entrypoint = JSON.parse(entry?.text ?? '[]') as string[];
  t.equal(entrypoint[0], 'node', 'exec form, node first');
  const script = entrypoint[1] ?? '';
  const appDir = workdirAt(
    final,
    final.instructions.indexOf(entry as DockerStage['instructions'][0]),
  );
  t.equal(
    posix.relative(appDir, posix.resolve(appDir, script)),
    emitted,
    'ENTRYPOINT runs the built main.js',
  );

  // dist/ finds package.json and proto/ at ../../ at run time, so all three share appDir.
  const copied = final.instructions
    .map((i, index) => ({ i, index }))
    .filter(({ i }) => i.keyword === 'COPY')
    .map(({ i, index }) => {
      const parts = i.text.split(/\s+/).filter((p) => !p.startsWith('--'));
      return posix.resolve(workdirAt(final, index), parts.at(-1) ?? '');
    });
  for (const needed of ['dist', 'proto', 'node_modules']) {
    t.ok(copied.includes(posix.join(appDir, needed)), `${needed} is copied to ${appDir}`);
  }
  t.ok(
    copied.includes(appDir) || copied.includes(posix.join(appDir, 'package.json')),
    'package.json is copied next to dist',
  );
});

t.test(
  'the Dockerfile builds anywhere: its bases are build args, labelled, non-root',
  async (t) => {
    const { globalArgs, stages } = parseDockerfile(
      await readFile(join(repoRoot, 'Dockerfile'), 'utf8'),
    );
    const pkg = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as {
      version: string;
      license: string;
    };
    for (const stage of stages.filter((s) => !stages.some((other) => other.name === s.written))) {
      const arg = /^\$\{([A-Z_]+)\}$/.exec(stage.written)?.[1] ?? '';
      t.ok(
        globalArgs.has(arg),
        `FROM ${stage.written}: a build argument, so any base can be passed`,
      );
      t.match(
        globalArgs.get(arg),
        /^node:\d+-[a-z]+-slim$/,
        `${arg} defaults to an official image`,
      );
    }
    const final = stages.at(-1) as DockerStage;
    const user = final.instructions.filter((i) => i.keyword === 'USER').at(-1)?.text ?? 'root';
    t.notMatch(user, /^(0|root)(:|$)/, `the image runs as ${user}: non-root unless asked`);
    t.ok(
      final.instructions.some((i) => i.keyword === 'RUN' && /\bmount\b.*\bumount\b/.test(i.text)),
      'the runtime image is checked for mount and umount (bind mode runs them)',
    );
    const versionArg = final.instructions.find(
      (i) => i.keyword === 'ARG' && i.text.startsWith('VERSION='),
    );
    t.equal(versionArg?.text, `VERSION=${pkg.version}`, "VERSION defaults to package.json's");
    const labels = final.instructions
      .filter((i) => i.keyword === 'LABEL')
      .map((i) => i.text)
      .join(' ');
    const label = (key: string) =>
      new RegExp(`org\\.opencontainers\\.image\\.${key}="([^"]*)"`).exec(labels)?.[1];
    t.equal(label('version'), '${VERSION}', 'the version label is the build argument');
    t.equal(label('licenses'), pkg.license, "the licenses label is package.json's");
    t.match(label('source'), /^https:\/\//, 'the source label is a URL');
  },
);

t.test('.dockerignore keeps local state out but not what the build needs', async (t) => {
  const entries = (await readFile(join(repoRoot, '.dockerignore'), 'utf8'))
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  for (const entry of ['node_modules', '.git', '.cert-csi', '.tap', 'coverage']) {
    t.ok(entries.includes(entry), `${entry} is ignored`);
  }
  for (const needed of ['src', 'proto', 'package.json', 'package-lock.json', 'tsconfig.json']) {
    t.notOk(entries.includes(needed), `${needed} is in the build context`);
  }
});

t.test('the install guide names every manifest file', async (t) => {
  const readme = await readFile(installGuide, 'utf8');
  for (const file of new Set(manifests.map((m) => m.file))) {
    t.match(readme, file, `README.md mentions ${file}`);
  }
});

t.test(
  'what the Certificate controllers write fits the Certificate and CertificateRequest CRDs',
  async (t) => {
    const ca = named<Certificate & KubeDoc>('Certificate', 'cert-csi-ca');
    const certificate: Certificate = {
      ...ca,
      metadata: { ...ca.metadata, uid: '0b7c7a0e-6a35-4b1e-9a52-0c1b2f3d4e5f', generation: 2 },
    };
    const now = new Date('2026-11-21T10:00:00.123Z');
    const statusSchema = storageSchema(CertificateKind).properties?.status ?? {};
    const notReady = readinessStatus({
      certificate,
      secret: undefined,
      currentRequest: undefined,
      currentCsr: undefined,
      now,
    });
    t.same(schemaProblems(notReady, statusSchema, 'status'), [], 'a readiness status');
    const failed = failedIssuanceStatus(certificate, { reason: 'Denied', message: 'no' }, now);
    t.same(schemaProblems(failed, statusSchema, 'status'), [], 'a failed issuance');
    const issued = {
      ...issuedCertificateStatus({ ...certificate, status: failed }),
      notBefore: '2026-11-21T10:00:00Z',
      notAfter: '2027-11-21T10:00:00Z',
      renewalTime: '2027-10-22T10:00:00Z',
      nextPrivateKeySecretName: 'cert-csi-ca-x7k2p',
    };
    t.same(schemaProblems(issued, statusSchema, 'status'), [], 'an issued status');
    const request = buildNextRequest({
      certificate,
      revision: 1,
      keySecretName: 'cert-csi-ca-x7k2p',
      csrPem: '-----BEGIN CERTIFICATE REQUEST-----\n-----END CERTIFICATE REQUEST-----\n',
    });
    const crSchema = storageSchema(CertificateRequestKind).properties ?? {};
    t.same(
      schemaProblems(request.spec, crSchema.spec ?? {}, 'spec'),
      [],
      "the requestmanager's spec",
    );
  },
);

t.test(
  'the pod certificate example in README.md uses the bootstrap CA and its trust bundle',
  async (t) => {
    const readme = await readFile(installGuide, 'utf8');
    const blocks = [...readme.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
    const podText = blocks.find((block) => block.includes('podCertificate:'));
    if (!podText) throw new Error('no pod certificate example in README.md');
    type Projected = {
      podCertificate?: {
        signerName: string;
        keyType: string;
        maxExpirationSeconds: number;
        credentialBundlePath: string;
      };
      clusterTrustBundle?: {
        signerName: string;
        labelSelector: { matchLabels: Record<string, string> };
        path: string;
      };
    };
    const pod = parse(podText) as {
      spec: { volumes: Array<{ projected?: { sources: Projected[] } }> };
    };
    const sources = pod.spec.volumes.flatMap((v) => v.projected?.sources ?? []);
    const certificate = sources.find((s) => s.podCertificate)?.podCertificate;
    const bundle = sources.find((s) => s.clusterTrustBundle)?.clusterTrustBundle;
    if (!certificate || !bundle) throw new Error('both projections expected');
    const issuer = named<Issuer & KubeDoc>('ClusterIssuer', 'cert-csi-ca');
    t.equal(certificate.signerName, signerNameOfIssuer(issuer), "the bootstrap CA's signer name");
    t.ok(
      (POD_CERTIFICATE_KEY_TYPES as readonly string[]).includes(certificate.keyType),
      'a key type kubelet makes and the signer accepts',
    );
    t.ok(certificate.maxExpirationSeconds >= 3600, 'at least the API minimum');
    t.equal(bundle.signerName, certificate.signerName, 'trusts the same signer');
    t.same(bundle.labelSelector.matchLabels, { [TRUST_BUNDLE_LABEL]: 'true' }, 'our bundle label');
    t.match(
      readme,
      `kubectl annotate clusterissuer cert-csi-ca ${POD_CERTIFICATE_NAMESPACES_ANNOTATION}=`,
      'the opt-in names the annotation the signer reads',
    );
    t.match(readme, trustBundleNameOf(certificate.signerName), "the bundle's name");

    const role = named<Role>('ClusterRole', 'cert-csi-controller');
    const group = 'certificates.k8s.io';
    for (const verb of ['list', 'watch']) {
      t.ok(grants(role, group, 'podcertificaterequests', verb), `${verb} requests`);
    }
    t.ok(grants(role, group, 'podcertificaterequests/status', 'update'), 'answer requests');
    for (const verb of ['list', 'watch']) {
      t.ok(grants(role, group, 'certificatesigningrequests', verb), `${verb} CSRs`);
    }
    t.ok(grants(role, group, 'certificatesigningrequests/status', 'update'), 'answer CSRs');
    t.notOk(grants(role, group, 'signers', 'approve', 'issuers.cert-manager.io/*'), 'no approval');
    t.ok(
      grants(role, 'authorization.k8s.io', 'subjectaccessreviews', 'create'),
      "ask whether a CSR's requester may reference an Issuer",
    );
    for (const verb of ['sign', 'attest']) {
      for (const name of ['issuers.cert-manager.io/*', 'clusterissuers.cert-manager.io/*']) {
        t.ok(grants(role, group, 'signers', verb, name), `${verb} ${name}`);
      }
      t.notOk(grants(role, group, 'signers', verb, 'example.com/*'), `no ${verb} for others`);
    }
    for (const verb of ['create', 'update', 'delete', 'list', 'watch']) {
      t.ok(grants(role, group, 'clustertrustbundles', verb), `${verb} clustertrustbundles`);
    }
    t.ok(grants(role, '', 'pods', 'get'), 'read the pod a request names');
    t.notOk(grants(role, '', 'pods', 'list'), 'but not every pod');
    t.ok(grants(role, '', 'namespaces', 'watch'), "cache the namespaces' labels");
  },
);

function parseWebhookArgs(c: Container) {
  const [command, ...rest] = expandedArgs(c);
  try {
    const { values } = parseArgs({ args: rest, options: WEBHOOK_OPTIONS });
    return { command, values, settings: webhookSettings(values, {}) };
  } catch (err) {
    throw new Error(`cert-csi webhook would refuse ${c.name}'s args: ${(err as Error).message}`);
  }
}

function containerPort(c: Container, port: number | string | undefined): number | undefined {
  return typeof port === 'string' ? c.ports?.find((p) => p.name === port)?.containerPort : port;
}

interface ServiceDoc extends KubeDoc {
  spec: {
    selector: Record<string, string>;
    ports: { name?: string; port: number; targetPort: number | string }[];
  };
}

t.test(
  'the webhook passes only flags `cert-csi webhook` accepts; Service and probes agree',
  async (t) => {
    const deployment = webhook();
    const main = deployment.spec.template.spec.containers[0] as Container;
    t.equal(deployment.spec.template.spec.containers.length, 1, 'one container');
    const { command, settings } = parseWebhookArgs(main);
    t.equal(command, 'webhook', 'first arg is the subcommand');
    t.equal(settings.namespace, deployment.metadata.namespace, '--namespace is its own namespace');
    t.ok(
      (deployment.spec.replicas ?? 1) >= 2,
      'two replicas: a write is never refused for want of one',
    );
    t.equal(main.image, container(daemonSet(), PLUGIN).image, 'the same image');
    t.equal(containerPort(main, 'https'), settings.port, 'the https port is --secure-port');
    for (const [probe, path] of [
      [main.readinessProbe, '/readyz'],
      [main.livenessProbe, '/livez'],
    ] as const) {
      t.equal(probe?.httpGet?.path, path);
      t.equal(probe?.httpGet?.scheme, 'HTTPS', `${path} over HTTPS`);
      t.equal(containerPort(main, probe?.httpGet?.port), settings.port, `${path} on --secure-port`);
    }
    const service = named<ServiceDoc>('Service', settings.serviceName);
    t.equal(
      service.metadata.namespace,
      settings.namespace,
      'the Service of --service-name is there',
    );
    for (const [key, value] of Object.entries(service.spec.selector)) {
      t.equal(deployment.spec.template.metadata.labels[key], value, `the Service selects ${key}`);
    }
    const https = service.spec.ports.find((p) => p.port === 443);
    t.equal(containerPort(main, https?.targetPort), settings.port, 'Service 443 → --secure-port');
    const budget = named<
      KubeDoc & {
        spec: { minAvailable: number; selector: { matchLabels: Record<string, string> } };
      }
    >('PodDisruptionBudget', 'cert-csi-webhook');
    t.equal(budget.spec.minAvailable, 1, 'a drain keeps one replica');
    t.same(budget.spec.selector.matchLabels, deployment.spec.selector.matchLabels);
    t.ok(settings.shutdownDelayMs > 0, 'serves on briefly after SIGTERM');
  },
);

const REVIEWED = ['CREATE', 'UPDATE'];

/** The operations a configuration's webhooks are sent for resource of cert-manager.io/v1. */
function operationsFor(webhooks: readonly WebhookCommon[], resource: string): string[] {
  return webhooks.flatMap((w) =>
    (w.rules ?? [])
      .filter(
        (r) =>
          r.apiGroups?.includes('cert-manager.io') &&
          r.apiVersions?.includes('v1') &&
          r.resources?.includes(resource),
      )
      .flatMap((r) => r.operations ?? []),
  );
}

t.test(
  'the webhook configurations reach the webhook and cover what cert-manager checks',
  async (t) => {
    const { settings } = parseWebhookArgs(webhook().spec.template.spec.containers[0] as Container);
    const validating = named<ValidatingWebhookConfiguration & KubeDoc>(
      'ValidatingWebhookConfiguration',
      settings.validatingWebhookConfiguration ?? '',
    );
    const mutating = named<MutatingWebhookConfiguration & KubeDoc>(
      'MutatingWebhookConfiguration',
      settings.mutatingWebhookConfiguration ?? '',
    );
    t.same(
      webhookConfigurationErrors(validating, false),
      [],
      'the API server accepts the validating one',
    );
    t.same(webhookConfigurationErrors(mutating, true), [], 'and the mutating one');
    const all = [
      ...(validating.webhooks ?? []).map((w) => ({ w, path: '/validate' })),
      ...(mutating.webhooks ?? []).map((w) => ({ w, path: '/mutate' })),
    ];
    for (const { w, path } of all) {
      t.same(
        w.clientConfig.service,
        {
          namespace: settings.namespace,
          name: settings.serviceName,
          path,
          port: 443,
        },
        `${w.name}: the Service, on ${path}`,
      );
      t.equal(w.clientConfig.caBundle, undefined, `${w.name}: no caBundle (the webhook keeps it)`);
      t.same(w.admissionReviewVersions, ['v1'], `${w.name}: AdmissionReview v1`);
      t.equal(w.sideEffects, 'None');
      t.equal(w.failurePolicy, 'Fail', `${w.name}: an unanswered write is refused`);
      t.ok(
        (w.timeoutSeconds ?? 10) * 1000 > settings.requestTimeoutMs,
        `${w.name}: the webhook's own API calls time out before the API server gives up`,
      );
    }
    const webhooks = validating.webhooks ?? [];
    t.same(operationsFor(webhooks, 'certificaterequests').sort(), REVIEWED);
    t.same(operationsFor(webhooks, 'certificaterequests/status'), ['UPDATE'], 'approvals');
    for (const resource of ['certificates', 'issuers', 'clusterissuers']) {
      t.same(operationsFor(webhooks, resource).sort(), REVIEWED, resource);
    }
    t.same(operationsFor(mutating.webhooks ?? [], 'certificaterequests'), ['CREATE'], 'identity');
    const guard = webhooks.filter((w) => operationsFor([w], 'certificaterequests').length > 0);
    for (const w of [...guard, ...(mutating.webhooks ?? [])]) {
      t.equal(w.objectSelector, undefined, `${w.name}: no label lets a request around it`);
      t.equal(w.namespaceSelector, undefined, `${w.name}: nor a namespace`);
    }
  },
);

t.test('only the bootstrap objects bypass field validation while the webhook starts', async (t) => {
  const validating = named<ValidatingWebhookConfiguration & KubeDoc>(
    'ValidatingWebhookConfiguration',
    'cert-csi-webhook',
  );
  const resources = (validating.webhooks ?? []).find(
    (w) => operationsFor([w], 'certificates').length > 0,
  );
  const bypass = resources?.objectSelector?.matchExpressions?.[0];
  t.same(bypass, { key: 'cert-csi.io/webhook-bypass', operator: 'NotIn', values: ['true'] });
  const bootstrap = manifests.filter((m) => m.file === 'bootstrap-ca.yaml');
  t.equal(bootstrap.length, 3);
  for (const { doc } of bootstrap) {
    t.equal(
      doc.metadata.labels?.['cert-csi.io/webhook-bypass'],
      'true',
      `${doc.kind} ${doc.metadata.name}`,
    );
  }
  const others = manifests.filter(
    (m) => m.file !== 'bootstrap-ca.yaml' && m.doc.metadata.labels?.['cert-csi.io/webhook-bypass'],
  );
  t.same(
    others.map((m) => m.where),
    [],
    'nothing else carries it',
  );
});

t.test(
  'the webhook may review access, keep its configurations and its CA Secret, no more',
  async (t) => {
    const deployment = webhook();
    const { settings } = parseWebhookArgs(deployment.spec.template.spec.containers[0] as Container);
    const role = named<Role>('ClusterRole', 'cert-csi-webhook');
    t.ok(
      grants(role, 'authorization.k8s.io', 'subjectaccessreviews', 'create'),
      'ask SubjectAccessReviews',
    );
    for (const [resource, name] of [
      ['validatingwebhookconfigurations', settings.validatingWebhookConfiguration],
      ['mutatingwebhookconfigurations', settings.mutatingWebhookConfiguration],
    ] as const) {
      for (const verb of ['get', 'list', 'watch', 'update']) {
        t.ok(
          grants(role, 'admissionregistration.k8s.io', resource, verb, name),
          `${verb} ${resource} ${name}`,
        );
        t.notOk(
          grants(role, 'admissionregistration.k8s.io', resource, verb, 'someone-elses'),
          `only ${name}`,
        );
      }
      t.notOk(
        grants(role, 'admissionregistration.k8s.io', resource, 'create'),
        `no create of ${resource}`,
      );
    }
    t.notOk(
      role.rules.some((r) => r.resources.includes('secrets')),
      'no Secrets cluster-wide',
    );
    const account = deployment.spec.template.spec.serviceAccountName ?? '';
    const roleBindings = bindingsFor('RoleBinding', account, settings.namespace);
    t.equal(roleBindings.length, 1);
    const caRole = ofKind<Role>('Role').find(
      (r) =>
        r.metadata.name === roleBindings[0]?.roleRef.name &&
        r.metadata.namespace === settings.namespace,
    );
    if (!caRole) throw new Error('no Role for the CA Secret');
    t.ok(grants(caRole, '', 'secrets', 'create'), 'create the CA Secret');
    for (const verb of ['get', 'list', 'watch', 'update']) {
      t.ok(
        grants(caRole, '', 'secrets', verb, settings.caSecretName),
        `${verb} ${settings.caSecretName}`,
      );
      t.notOk(grants(caRole, '', 'secrets', verb, 'cert-csi-ca'), `not the install CA's Secret`);
    }
    const approve = ofKind<Binding>('ClusterRoleBinding')
      .filter((b) => b.subjects.some((s) => s.name === 'cert-csi-controller'))
      .map((b) => named<Role>('ClusterRole', b.roleRef.name))
      .filter((r) => r.rules.some((rule) => rule.verbs.includes('approve')));
    t.equal(approve.length, 1, "the controller's approver may approve");
    for (const name of ['issuers.cert-manager.io/*', 'clusterissuers.cert-manager.io/*']) {
      t.ok(grants(approve[0] as Role, 'cert-manager.io', 'signers', 'approve', name), name);
    }
    t.notOk(grants(approve[0] as Role, 'cert-manager.io', 'signers', 'approve', 'example.com/*'));
  },
);
