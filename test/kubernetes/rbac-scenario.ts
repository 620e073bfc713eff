// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${POD_IP}` is the variable syntax under test
// The RBAC scenario the rbac tests share (rbac.test.ts and the rbac-removals-*.test.ts files):
// everything both components do in a cluster, run under the manifests' rules or under a copy
// missing one rule or verb. The removal cases are split by the part of the work they take away,
// one file per part, so that no file runs all of them one after another.
import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import pLimit from 'p-limit';
import type { Test } from 'tap';
import { type Certificate, CertificateKind } from '../../src/api/certificate.js';
import {
  type CertificateSigningRequest,
  CertificateSigningRequestKind,
} from '../../src/api/certificate-signing-request.js';
import {
  type ClusterTrustBundle,
  ClusterTrustBundleKind,
} from '../../src/api/cluster-trust-bundle.js';
import { isConditionTrue, setCondition } from '../../src/api/conditions.js';
import { ConfigMapKind } from '../../src/api/config-map.js';
import { ClusterIssuerKind, type Issuer, IssuerKind } from '../../src/api/issuer.js';
import { NamespaceKind } from '../../src/api/namespace.js';
import { type Pod, PodKind } from '../../src/api/pod.js';
import {
  type PodCertificateRequest,
  PodCertificateRequestKind,
  terminalConditionOf,
} from '../../src/api/pod-certificate-request.js';
import { type Secret, SecretKind } from '../../src/api/secret.js';
import { TrustManagerBundleKind } from '../../src/api/trust-manager-bundle.js';
import { startKubernetesPlugin } from '../../src/cli/node/kubernetes-plugin.js';
import { CsiClient } from '../../src/driver/csi-client.js';
import { POD_CERTIFICATE_NAMESPACES_ANNOTATION } from '../../src/issuer/podcertificaterequests/pod-certificate-policy.js';
import { KubernetesStore } from '../../src/store/kubernetes/kubernetes-store.js';
import { createMounter } from '../../src/volume/create-mounter.js';
import { volumeManagerSettings } from '../../src/volume-manager/settings.js';
import type { RequestLogEntry } from '../fake-api-server/fake-api-server.js';
import {
  loadRbacYaml,
  type RbacAuthorizer,
  type RuleRemoval,
} from '../fake-api-server/rbac-authorizer.js';
import {
  clusterIssuer,
  issuer,
  tlsSecret,
  withAnnotations,
  withNamespace,
  withSpec,
} from '../support/builders/index.js';
import { certificateObject, updateCertificate } from '../support/certificate-stack.js';
import {
  appPod,
  type Cluster,
  CONTROLLER_USER,
  caIssuerAttributes,
  NODE_TOKEN,
  POD_NAMESPACE,
  startCluster,
  startClusterController,
} from '../support/cluster-harness.js';
import { csrObject, decideThroughApproval, keyedCsr } from '../support/csr-fixtures.js';
import { until as waitUntil } from '../support/eventually.js';
import {
  expireOnceWaiting,
  HELD_DEADLINE_MS,
  HeldDeadlines,
  WaitingLog,
} from '../support/held-deadlines.js';
import { makeCA } from '../support/issuer-fixtures.js';
import {
  createPod,
  kubeletRequest,
  namespaceObject,
  podIdentity,
} from '../support/pod-certificates.js';
import { inlineVolumeCall, podInfo } from '../support/publish-call.js';
import { waitForNoObjects, waitForObject } from '../support/wait-for-object.js';

const NODE_USER = 'system:serviceaccount:cert-csi:cert-csi-node';
const CLUSTER_SIGNER = 'clusterissuers.cert-manager.io/cluster-ca';
const CLUSTER_BUNDLE = 'clusterissuers.cert-manager.io:cluster-ca:primary';

// A CSR requester of the scenario (not ours: its rules are never removed): it may create CSRs
// and reference the namespaced CA Issuer the CSR names.
const CSR_REQUESTER_TOKEN = 'csr-requester-token';
const CSR_REQUESTER_RBAC = loadRbacYaml(`
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: test:csr-requester}
rules:
- {apiGroups: [certificates.k8s.io], resources: [certificatesigningrequests], verbs: [create]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: test:csr-requester}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: test:csr-requester}
subjects: [{kind: User, name: csr-requester}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: test:reference-ca, namespace: ${POD_NAMESPACE}}
rules:
- {apiGroups: [cert-manager.io], resources: [signers], verbs: [reference], resourceNames: [ca]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: test:reference-ca, namespace: ${POD_NAMESPACE}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: test:reference-ca}
subjects: [{kind: User, name: csr-requester}]
`);

/** The roles of deploy/: the rules whose removals are tested. */
export const OUR_ROLES = [
  'ClusterRole/cert-csi-node',
  'ClusterRole/cert-csi-controller',
  'Role/cert-csi/cert-csi-controller:leader-election',
];

/**
 * A request refused for want of a permission: 403, or 422 for a PodCertificateRequest status
 * write without `sign` (the API server checks it in the status strategy, whose errors are
 * Invalid; nothing else in the scenario makes that write invalid).
 */
function refusedForPermission(r: RequestLogEntry): boolean {
  return (
    r.status === 403 ||
    (r.status === 422 && r.resource === 'podcertificaterequests' && r.subresource === 'status')
  );
}

/** Long enough that only a broken scenario reaches it, even on a loaded machine. */
const STEP_TIMEOUT_MS = 60_000;

/** Volumes get ECDSA keys: RSA key generation would be most of this file's CPU time. */
const ECDSA = { 'csi.cert-manager.io/key-algorithm': 'ECDSA' };

/**
 * Resolves once the server has answered a request that matches, before or after the call;
 * an abort of signal ends the wait.
 */
function answered(
  cluster: Cluster,
  match: (r: RequestLogEntry) => boolean,
  signal: AbortSignal,
): Promise<void> {
  if (cluster.server.requests.some((r) => r.status !== 0 && match(r))) return Promise.resolve();
  return cluster.server.waitForRequest(match, STEP_TIMEOUT_MS, signal).then(() => undefined);
}

/**
 * Waits for the steps a refusal overtook, expiring the held deadlines meanwhile: an issuance
 * the refusal left waiting (a request nobody may approve) ends at its deadline, as it would
 * with a real one.
 */
async function settleExpiring(steps: Promise<unknown>[], deadlines: HeldDeadlines): Promise<void> {
  let settled = false;
  const all = Promise.allSettled(steps).then(() => {
    settled = true;
  });
  while (!settled) {
    deadlines.expire();
    await Promise.race([all, delay(50)]);
  }
}

/**
 * Everything the two components do in a cluster, once: the controller takes and renews
 * its Lease, marks an Issuer and a ClusterIssuer ready, approves and signs, and issues a
 * user's Certificate and re-issues it (revision 2), signs a user's CertificateSigningRequest for a
 * namespaced Issuer (after asking whether the user may reference it), once an admin approved
 * it; the plugin lists and watches its requests, creates one,
 * renews it (deleting the old one) and records an Event when an issuance cannot finish.
 * Returns the refused requests.
 *
 * With `until`, the scenario ends as soon as the server has refused a request that matches
 * (each step is raced against it): a step the missing permission blocks (a plugin that cannot
 * list its requests never starts) does not have to time out. Without it, every step runs to
 * its end, however long the machine takes: no step is cut short by a wall-clock budget.
 */
export async function everything(
  t: Pick<Test, 'teardown'>,
  cluster: Cluster,
  until?: (refused: RequestLogEntry) => boolean,
): Promise<{
  forbidden: RequestLogEntry[];
  issued: boolean;
  certificates: boolean;
  podCertificates: boolean;
  csrs: boolean;
  podIp: boolean;
}> {
  const { server } = cluster;
  server.rbac = server.rbac?.with(CSR_REQUESTER_RBAC);
  server.addToken(CSR_REQUESTER_TOKEN, { username: 'csr-requester' });
  // Ends the waits on the server's log that are still open when the scenario ends.
  const waits = new AbortController();
  t.teardown(() => waits.abort());
  let refused = false;
  const refusedAsExpected = until
    ? answered(cluster, (r) => refusedForPermission(r) && until(r), waits.signal).then(() => {
        refused = true;
        // Nothing more to see: the waits on the server's log and the plugin's end now.
        waits.abort();
        return 'refused' as const;
      })
    : new Promise<never>(() => {});
  // A step overtaken by the refusal still runs: the components stop only once it has settled,
  // since a renewal that fails after its plugin stopped arms a retry timer nobody clears (and
  // that timer kept this file's process alive). No new step starts after the refusal.
  const overtaken: Promise<unknown>[] = [];
  const step = <T>(work: () => Promise<T>): Promise<T | 'refused'> => {
    if (refused) return Promise.resolve('refused');
    const running = work();
    overtaken.push(running.catch(() => undefined));
    return Promise.race([running, refusedAsExpected]);
  };
  const ca = await makeCA();
  const secret = { 'tls.crt': ca.certificatePem, 'tls.key': ca.keyPem };
  await server.store.create(SecretKind, tlsSecret(POD_NAMESPACE, 'ca-key-pair', secret));
  await server.store.create(SecretKind, tlsSecret('cert-csi', 'cluster-ca', secret));
  await server.store.create(
    IssuerKind,
    issuer('ca', withNamespace(POD_NAMESPACE), withSpec({ ca: { secretName: 'ca-key-pair' } })),
  );
  const clusterCa = clusterIssuer(
    'cluster-ca',
    withSpec({ ca: { secretName: 'cluster-ca' } }),
    withAnnotations({ [POD_CERTIFICATE_NAMESPACES_ANNOTATION]: '' }),
  );
  await server.store.create(ClusterIssuerKind, clusterCa);
  await server.store.create(NamespaceKind, namespaceObject(POD_NAMESPACE));
  // Trust bundle sources of the node's volumes (below).
  for (const name of ['roots', 'trust-roots']) {
    await server.store.create(ConfigMapKind, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: POD_NAMESPACE },
      data: { 'ca.crt': ca.certificatePem, 'root-certs.pem': ca.certificatePem },
    });
  }
  await server.store.create(TrustManagerBundleKind, {
    apiVersion: 'trust.cert-manager.io/v1alpha1',
    kind: 'Bundle',
    metadata: { name: 'trust-roots' },
    spec: { target: { configMap: { key: 'root-certs.pem' } } },
  });
  await server.store.create<ClusterTrustBundle>(ClusterTrustBundleKind, {
    apiVersion: 'certificates.k8s.io/v1beta1',
    kind: 'ClusterTrustBundle',
    metadata: { name: 'corp-roots' },
    spec: { trustBundle: ca.certificatePem },
  });
  const pod = await createPod(server.store, podIdentity(POD_NAMESPACE, 'pod-cert-app'));
  await server.store.create(
    CertificateKind,
    certificateObject(POD_NAMESPACE, 'web', {
      dnsNames: [`web.${POD_NAMESPACE}.svc`],
      issuerRef: { name: 'ca', kind: 'Issuer', group: 'cert-manager.io' },
      // RSA key generation would be most of this file's CPU time.
      privateKey: { algorithm: 'ECDSA' },
    }),
  );

  const controller = startClusterController(t, cluster, {
    leaderElection: {
      namespace: 'cert-csi',
      name: 'cert-csi-controller',
      leaseDurationMs: 2_000,
      renewDeadlineMs: 1_500,
      retryPeriodMs: 200,
    },
  });
  const dir = await mkdtemp(join(tmpdir(), 'cert-csi-rbac-'));
  const endpoint = { kind: 'unix' as const, path: join(dir, 'csi.sock') };
  const abort = new AbortController();
  // Held deadlines: no issuance races a clock; the stuck one below is expired once it waits.
  const deadlines = new HeldDeadlines();
  const waiting = new WaitingLog();
  const starting = startKubernetesPlugin({
    endpoint,
    settings: volumeManagerSettings({ nodeId: 'node-1', attemptTimeoutMs: HELD_DEADLINE_MS }),
    driverName: 'csi.cert-manager.io',
    version: 'test',
    dataRoot: join(dir, 'volumes'),
    mounter: createMounter({ mode: 'direct' }),
    logger: waiting,
    clock: deadlines,
    kubeConfig: cluster.kubeConfig(NODE_TOKEN),
    qps: 1000,
    burst: 1000,
    useTokenRequest: false,
    signal: abort.signal,
  });
  let issued = false;
  let podIp = false;
  // The Certificate controllers issue the user's Certificate, then re-issue it by hand
  // (cmctl's way): creates, updates and deletes of requests and Secrets, status writes.
  let certificates = false;
  const certificateReady = (revision: number) =>
    waitForObject<Certificate>(
      server.store,
      CertificateKind,
      'web',
      POD_NAMESPACE,
      (c) =>
        isConditionTrue(c.status?.conditions, 'Ready') &&
        c.status?.revision === revision &&
        c.status.nextPrivateKeySecretName === undefined,
      STEP_TIMEOUT_MS,
      waits.signal,
    );
  // Runs beside the plugin's steps below; awaited before the components stop.
  const reissuing = step(async () => {
    await certificateReady(1);
    await updateCertificate(
      server.store,
      POD_NAMESPACE,
      'web',
      (current) => ({
        ...current,
        status: {
          ...current.status,
          conditions: setCondition(
            current.status?.conditions,
            { type: 'Issuing', status: 'True', reason: 'ManuallyTriggered', message: 'by hand' },
            new Date(),
          ),
        },
      }),
      'updateStatus',
    );
    return certificateReady(2);
  }).then(
    (done) => {
      certificates = done !== 'refused';
    },
    () => undefined,
  );
  // Pod certificates, beside the rest: a kubelet request answered (pods get, sign), the
  // ClusterIssuer's trust bundle published, updated by a CA rotation (attest) and withdrawn
  // when the ClusterIssuer opts out.
  let podCertificates = false;
  const bundleOf = (predicate: (bundle: ClusterTrustBundle) => boolean) =>
    waitForObject<ClusterTrustBundle>(
      server.store,
      ClusterTrustBundleKind,
      CLUSTER_BUNDLE,
      undefined,
      predicate,
      STEP_TIMEOUT_MS,
      waits.signal,
    );
  const podCertificating = step(async () => {
    const { request } = await kubeletRequest(pod, CLUSTER_SIGNER, 'ECDSAP256', '1.36');
    const created = await server.store.create(PodCertificateRequestKind, request);
    await waitForObject<PodCertificateRequest>(
      server.store,
      PodCertificateRequestKind,
      created.metadata.name,
      POD_NAMESPACE,
      (r) => terminalConditionOf(r)?.type === 'Issued',
      STEP_TIMEOUT_MS,
      waits.signal,
    );
    const first = await bundleOf(() => true);
    const next = await makeCA();
    const stored = await server.store.get<Secret>(SecretKind, 'cluster-ca', 'cert-csi');
    await server.store.update(SecretKind, {
      ...stored,
      data: tlsSecret('cert-csi', 'cluster-ca', {
        'tls.crt': next.certificatePem,
        'tls.key': next.keyPem,
      }).data,
    });
    await bundleOf((bundle) => bundle.spec.trustBundle !== first.spec.trustBundle);
    const current = await server.store.get<Issuer>(ClusterIssuerKind, 'cluster-ca');
    await server.store.update(ClusterIssuerKind, {
      ...current,
      metadata: { ...current.metadata, annotations: {} },
    });
    await waitForNoObjects(
      server.store,
      ClusterTrustBundleKind,
      { fieldSelector: `metadata.name=${CLUSTER_BUNDLE}` },
      STEP_TIMEOUT_MS,
      waits.signal,
    );
  }).then(
    (done) => {
      podCertificates = done !== 'refused';
    },
    () => undefined,
  );
  // A user's CSR for the namespaced CA Issuer, approved by an admin through the approval
  // subresource: list and watch CSRs, a SubjectAccessReview, a status write with `sign`.
  let csrs = false;
  const csrSigning = step(async () => {
    const { csrPem } = await keyedCsr();
    const user = new KubernetesStore({
      kubeConfig: cluster.kubeConfig(CSR_REQUESTER_TOKEN),
      qps: 1000,
      burst: 1000,
    });
    await user.create(
      CertificateSigningRequestKind,
      csrObject('user-csr', `issuers.cert-manager.io/${POD_NAMESPACE}.ca`, csrPem),
    );
    await decideThroughApproval(cluster.kubeConfig(server.adminToken), 'user-csr', 'Approved');
    await waitForObject<CertificateSigningRequest>(
      server.store,
      CertificateSigningRequestKind,
      'user-csr',
      undefined,
      (csr) => Boolean(csr.status?.certificate),
      STEP_TIMEOUT_MS,
      waits.signal,
    );
  }).then(
    (done) => {
      csrs = done !== 'refused';
    },
    () => undefined,
  );
  // A plugin that cannot list its requests never starts: the refusal ends the wait (the
  // start is not an overtaken step: it ends with the abort below).
  const plugin = await Promise.race([starting, refusedAsExpected]);
  if (plugin !== 'refused') {
    const client = new CsiClient(endpoint);
    const volume = (id: string, attributes: Record<string, string>) =>
      inlineVolumeCall(id, join(dir, 'pods', id), { ...appPod, ...ECDSA, ...attributes });
    try {
      // The controller first leads and watches requests (or is refused on the way): on a busy
      // machine that takes longer than the publish deadline below.
      await step(() =>
        answered(
          cluster,
          (r) =>
            r.user === CONTROLLER_USER &&
            r.verb === 'watch' &&
            r.resource === 'certificaterequests',
          waits.signal,
        ),
      );
      const published = await step(() =>
        client.nodeCall('NodePublishVolume', volume('vol-1', caIssuerAttributes)),
      );
      const renewed =
        published === 'refused'
          ? published
          : await step(() => plugin.manager.renewNow({ volumeId: 'vol-1' }));
      issued = renewed !== 'refused' && renewed.renewed.length === 1;
    } catch {
      issued = false;
    }
    // Readiness gates and ${POD_IP} (pods list, watch): the volume is published empty, the
    // node's pod informer brings the pod's IP, and the certificate follows.
    podIp =
      (await step(async () => {
        const target = join(dir, 'pods', 'vol-ip');
        await client.nodeCall(
          'NodePublishVolume',
          inlineVolumeCall('vol-ip', target, {
            ...podInfo({ name: pod.name, namespace: POD_NAMESPACE, uid: pod.uid }),
            ...ECDSA,
            ...caIssuerAttributes,
            'csi.cert-manager.io/ip-sans': '${POD_IP}',
          }),
        );
        const current = await server.store.get<Pod>(PodKind, pod.name, POD_NAMESPACE);
        await server.store.updateStatus<Pod>(PodKind, {
          ...current,
          status: { podIP: '10.244.0.9', podIPs: [{ ip: '10.244.0.9' }] },
        });
        await waitUntil(
          () =>
            access(join(target, 'tls.crt')).then(
              () => true,
              () => false,
            ),
          {
            what: 'the certificate of the pod IP volume',
            timeoutMs: STEP_TIMEOUT_MS,
            signal: waits.signal,
          },
        );
      })) !== 'refused';
    // An issuer that never answers: the publish times out and the pod gets an Event.
    await step(async () => {
      const publishing = client
        .nodeCall(
          'NodePublishVolume',
          volume('vol-2', { ...caIssuerAttributes, 'csi.cert-manager.io/issuer-name': 'missing' }),
        )
        .catch(() => undefined);
      const held = { deadlines, waiting, informers: plugin.informers };
      await expireOnceWaiting(held, 'vol-2', () => true, waits.signal);
      await publishing;
    });
    // Trust bundles that follow the CA: a volume per kind of source makes the plugin list and
    // watch a ConfigMap, a trust-manager Bundle (and its target ConfigMap) and a
    // ClusterTrustBundle.
    for (const [id, source, resource] of [
      ['vol-tb-1', 'configmap:roots/ca.crt', 'configmaps'],
      ['vol-tb-2', 'bundle:trust-roots', 'bundles'],
      ['vol-tb-3', 'clustertrustbundle:corp-roots', 'clustertrustbundles'],
    ] as const) {
      await step(() =>
        client.nodeCall(
          'NodePublishVolume',
          volume(id, { ...caIssuerAttributes, 'csi.cert-manager.io/trust-bundle': source }),
        ),
      );
      await step(() =>
        answered(
          cluster,
          (r) => r.user === NODE_USER && r.verb === 'watch' && r.resource === resource,
          waits.signal,
        ),
      );
    }
    await step(() => plugin.events.flush());
    await settleExpiring(overtaken, deadlines);
    client.close();
  }
  await reissuing;
  await podCertificating;
  await csrSigning;
  // At least one lease renewal after the start (the leader renews every retry period).
  await step(() =>
    answered(
      cluster,
      (r) => r.resource === 'leases' && r.verb === 'update' && r.user === CONTROLLER_USER,
      waits.signal,
    ),
  );
  waits.abort();
  await Promise.allSettled(overtaken);
  abort.abort();
  await starting.then((p) => p.stop()).catch(() => undefined);
  await controller.stop();
  await rm(dir, { recursive: true, force: true });
  return {
    forbidden: server.requests.filter(refusedForPermission),
    issued,
    certificates,
    podCertificates,
    csrs,
    podIp,
  };
}

const NODE_ROLE = 'ClusterRole/cert-csi-node';
const CONTROLLER_ROLE = 'ClusterRole/cert-csi-controller';
const LEADER_ELECTION_ROLE = 'Role/cert-csi/cert-csi-controller:leader-election';

/** What the cert-manager controllers read and write: requests, Certificates, issuers, Secrets. */
const CERT_MANAGER_RESOURCES = [
  'certificaterequests',
  'certificaterequests/status',
  'certificates',
  'certificates/status',
  'issuers',
  'issuers/status',
  'clusterissuers',
  'clusterissuers/status',
  'secrets',
  'events',
];

const resourcesOf = (removal: RuleRemoval) => removal.rule.rule.resources;

/** What a trust bundle volume reads: ConfigMaps, trust-manager Bundles, ClusterTrustBundles. */
const TRUST_BUNDLE_SOURCES = ['configmaps', 'bundles', 'clustertrustbundles'];

const isTrustBundleSource = (removal: RuleRemoval) =>
  resourcesOf(removal).every((resource) => TRUST_BUNDLE_SOURCES.includes(resource));

/**
 * The removal cases by the part of the scenario they take away, a test file each
 * (rbac-removals-<part>.test.ts). Every case is in exactly one part: rbac.test.ts checks it,
 * so a rule added to deploy/ is tested by some file.
 */
export const REMOVAL_PARTS = {
  /** The node plugin's rules on its requests, Events and pods. */
  'node-requests': (removal: RuleRemoval) =>
    removal.rule.role === NODE_ROLE && !isTrustBundleSource(removal),
  /** The node plugin's rules on the sources of trust bundles. */
  'node-trust-bundles': (removal: RuleRemoval) =>
    removal.rule.role === NODE_ROLE && isTrustBundleSource(removal),
  /** The controller's cert-manager work, and its leader election. */
  'controller-cert-manager': (removal: RuleRemoval) =>
    removal.rule.role === LEADER_ELECTION_ROLE ||
    (removal.rule.role === CONTROLLER_ROLE &&
      resourcesOf(removal).every((resource) => CERT_MANAGER_RESOURCES.includes(resource))),
  /** The controller's Kubernetes signing: pod certificates, CSRs, signers, trust bundles. */
  'controller-kubernetes-signing': (removal: RuleRemoval) =>
    removal.rule.role === CONTROLLER_ROLE &&
    !resourcesOf(removal).every((resource) => CERT_MANAGER_RESOURCES.includes(resource)),
} satisfies Record<string, (removal: RuleRemoval) => boolean>;

/** A part of the removal cases: see REMOVAL_PARTS. */
export type RemovalPart = keyof typeof REMOVAL_PARTS;

/** Every removal case of our roles, each with a copy of rbac missing its rule or verb. */
export function removalCases(rbac: RbacAuthorizer): RuleRemoval[] {
  return rbac.removals(OUR_ROLES);
}

/**
 * Runs the scenario once per removal case of part, each in a cluster of its own, until a
 * request the removed rule or verb guarded is refused: some request must be.
 */
export async function everyRemovalRefusesSomeRequest(t: Test, part: RemovalPart): Promise<void> {
  const full = (await startCluster(t)).rbac;
  const cases = removalCases(full).filter(REMOVAL_PARTS[part]);
  const limit = pLimit(3);
  await Promise.all(
    cases.map(({ label, rbac, rule, verb }) =>
      limit(async () => {
        const cluster = await startCluster(t);
        cluster.server.rbac = rbac;
        const resources = rule.rule.resources;
        // `sign` and `attest` on signers are checked by the API server on the writes they
        // guard: a request's status (a pod certificate's, a CSR's certificate) and a
        // signer-linked trust bundle.
        const guarded = (r: RequestLogEntry) =>
          ((verb === undefined || verb === 'sign') &&
            (r.resource === 'podcertificaterequests' ||
              r.resource === 'certificatesigningrequests') &&
            r.subresource === 'status') ||
          ((verb === undefined || verb === 'attest') && r.resource === 'clustertrustbundles');
        const matches = (r: RequestLogEntry) =>
          resources.includes('signers')
            ? guarded(r)
            : resources.includes(
                r.subresource ? `${r.resource}/${r.subresource}` : String(r.resource),
              ) &&
              (verb === undefined || r.verb === verb);
        const { forbidden } = await everything(t, cluster, matches);
        const refused = forbidden.filter(matches);
        t.ok(
          refused.length > 0,
          `without ${label} of ${rule.role} rule ${rule.index} (${resources.join(',')}: ${rule.rule.verbs.join(',')}) a request is refused`,
        );
      }),
    ),
  );
}
