import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { type Metadata, status } from '@grpc/grpc-js';
import { quoted } from '../../api/echoed-value.js';
import { POD_IPS_KEY } from '../../attributes/attribute-keys.js';
import { parseVolumeAttributes } from '../../attributes/volume-attributes.js';
import { CsiClient } from '../../driver/csi-client.js';
import { parseEndpoint } from '../../driver/endpoint.js';
import { readUnpublishOutcome } from '../../driver/unpublish-outcome.js';
import { readAtomically } from '../../fs/atomic-writer.js';
import { renewalTime } from '../../pki/renewal-time.js';
import type { UnpublishOutcome } from '../../volume-manager/volume-publisher.js';
import { commandFailure } from '../common/command-failure.js';
import { type CommandOutput, processOutput } from '../common/data-root-command.js';
import { flagTimeout } from '../common/flag-values.js';
import { PluginCallError } from './plugin-call-error.js';

/** How long publish and unpublish wait for the plugin's answer by default: kubelet's 2m. */
export const DEFAULT_CALL_TIMEOUT = '2m';

export const PUBLISH_HELP = `Usage: cert-csi publish --endpoint URL --volume-id ID --target DIR [flags] --attr KEY=VALUE...

Asks a running plugin to publish a volume, as kubelet does for a pod's inline CSI volume.

Exit codes: 0 published; 1 the plugin refused, failed or did not answer within --timeout.

Flags:
  --endpoint URL          the plugin's CSI socket (unix://PATH; a relative PATH is resolved here)
  --volume-id ID          volume id (kubelet uses csi-<sha256>)
  --target DIR            where the files appear (a relative DIR is resolved here: the
                          plugin itself takes absolute paths only, as from kubelet)
  --attr KEY=VALUE        a volume attribute; repeat it. A key without a prefix gets
                          csi.cert-manager.io/ (issuer-name=x means csi.cert-manager.io/issuer-name=x)
  --pod-name NAME         (default cert-csi-cli)
  --pod-namespace NS      namespace of the CertificateRequest (default default)
  --pod-uid UID           (default: none, no owner reference)
  --service-account NAME  (default default)
  --pod-ip IP             the pod's IP, for \${POD_IP} and \${POD_IPS} in ip-sans
                          (embedded mode); repeat it for a dual-stack pod, first
                          one first. Sent as csi.storage.k8s.io/pod.ips; a plugin in
                          Kubernetes mode ignores it and reads the pod's IPs from the API
  --fs-group GID          the pod's fsGroup, sent as volume_mount_group
  --timeout DURATION      how long to wait for the answer, Go syntax (default ${DEFAULT_CALL_TIMEOUT})
  -h, --help              show this help
`;

export const UNPUBLISH_HELP = `Usage: cert-csi unpublish --endpoint URL --volume-id ID --target DIR [--timeout DURATION]

Asks a running plugin to unpublish a volume: unmount, stop renewal, remove its files.
Only the target the volume is published at is unpublished. The plugin answers success
whatever it did, as kubelet needs; it tells this command whether anything was done.

Exit codes: 0 unpublished; 1 the plugin refused, failed or did not answer within
--timeout; 3 nothing unpublished: the volume is published at another target (which
keeps it), or this node has no such volume.

Flags:
  --endpoint URL       the plugin's CSI socket (unix://PATH; a relative PATH is resolved here)
  --volume-id ID       the volume to unpublish
  --target DIR         the target it was published to (a relative DIR is resolved here)
  --timeout DURATION   how long to wait for the answer, Go syntax (default ${DEFAULT_CALL_TIMEOUT})
  -h, --help           show this help
`;

/** `cert-csi publish`: NodePublishVolume from the command line, then a summary. */
export async function runPublish(
  args: string[],
  out: CommandOutput = processOutput,
): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      endpoint: { type: 'string' },
      'volume-id': { type: 'string' },
      target: { type: 'string' },
      attr: { type: 'string', multiple: true, default: [] },
      'pod-name': { type: 'string', default: 'cert-csi-cli' },
      'pod-namespace': { type: 'string', default: 'default' },
      'pod-uid': { type: 'string', default: '' },
      'service-account': { type: 'string', default: 'default' },
      'pod-ip': { type: 'string', multiple: true, default: [] },
      'fs-group': { type: 'string' },
      timeout: { type: 'string', default: DEFAULT_CALL_TIMEOUT },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    out.stdout.write(PUBLISH_HELP);
    return 0;
  }
  const { endpoint, target, timeoutMs } = requireFlags(values, PUBLISH_HELP);
  const volumeId = values['volume-id'] ?? '';
  const context: Record<string, string> = {
    'csi.storage.k8s.io/ephemeral': 'true',
    'csi.storage.k8s.io/pod.name': values['pod-name'],
    'csi.storage.k8s.io/pod.namespace': values['pod-namespace'],
    'csi.storage.k8s.io/pod.uid': values['pod-uid'],
    'csi.storage.k8s.io/serviceAccount.name': values['service-account'],
  };
  for (const ip of values['pod-ip']) {
    if (isIP(ip) === 0) throw new Error(`--pod-ip ${quoted(ip)}: not an IP address`);
  }
  if (values['pod-ip'].length > 0) context[POD_IPS_KEY] = values['pod-ip'].join(',');
  for (const pair of values.attr) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error(`--attr "${pair}": expected KEY=VALUE`);
    const key = pair.slice(0, eq);
    context[key.includes('/') ? key : `csi.cert-manager.io/${key}`] = pair.slice(eq + 1);
  }
  const client = new CsiClient(parseEndpoint(endpoint));
  const started = Date.now();
  try {
    await client.nodeCall(
      'NodePublishVolume',
      {
        volume_id: volumeId,
        target_path: target,
        readonly: true,
        volume_context: context,
        volume_capability: {
          mount: { fs_type: '', mount_flags: [], volume_mount_group: values['fs-group'] ?? '' },
          access_mode: { mode: 'SINGLE_NODE_READER_ONLY' },
        },
      },
      { timeoutMs },
    );
  } catch (err) {
    return reportRpcError(out, err, ranOut(started, timeoutMs) ? values.timeout : undefined);
  } finally {
    client.close();
  }
  await printSummary(out, volumeId, target, context, values['fs-group']);
  return 0;
}

/** `cert-csi unpublish`: NodeUnpublishVolume from the command line. */
export async function runUnpublish(
  args: string[],
  out: CommandOutput = processOutput,
): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      endpoint: { type: 'string' },
      'volume-id': { type: 'string' },
      target: { type: 'string' },
      timeout: { type: 'string', default: DEFAULT_CALL_TIMEOUT },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    out.stdout.write(UNPUBLISH_HELP);
    return 0;
  }
  const { endpoint, target, timeoutMs } = requireFlags(values, UNPUBLISH_HELP);
  const volumeId = values['volume-id'] ?? '';
  const client = new CsiClient(parseEndpoint(endpoint));
  const started = Date.now();
  let trailers: Metadata;
  try {
    ({ trailers } = await client.nodeCallWithTrailers(
      'NodeUnpublishVolume',
      { volume_id: volumeId, target_path: target },
      { timeoutMs },
    ));
  } catch (err) {
    return reportRpcError(out, err, ranOut(started, timeoutMs) ? values.timeout : undefined);
  } finally {
    client.close();
  }
  return reportUnpublished(out, volumeId, target, readUnpublishOutcome(trailers));
}

/** The exit status of an unpublish that did nothing (see UNPUBLISH_HELP). */
export const NOTHING_UNPUBLISHED_EXIT = 3;

// What the plugin said it did, from the trailers of its answer (read by the same call, so
// nothing can change in between); exit 0 only when something was unpublished.
function reportUnpublished(
  out: CommandOutput,
  volumeId: string,
  target: string,
  outcome: UnpublishOutcome | undefined,
): number {
  switch (outcome?.kind) {
    case 'unpublished':
      out.stdout.write(`unpublished ${volumeId} from ${target}\n`);
      return 0;
    case 'elsewhere':
      out.stderr.write(
        `nothing unpublished: volume ${volumeId} is published at ${outcome.recordedTarget}, not at ${target}\n`,
      );
      return NOTHING_UNPUBLISHED_EXIT;
    case 'not-published':
      out.stderr.write(`nothing unpublished: volume ${volumeId} is not published on this node\n`);
      return NOTHING_UNPUBLISHED_EXIT;
    default:
      // A CSI plugin other than cert-csi: its success is all there is to know.
      out.stdout.write(
        `the plugin answered success for ${volumeId} at ${target} (it does not say whether anything was unpublished)\n`,
      );
      return 0;
  }
}

/**
 * The flags every call needs. The target is made absolute here: the plugin refuses relative
 * paths (kubelet never sends one), and a person typing one means this directory.
 */
function requireFlags(
  values: { endpoint?: string | undefined; target?: string | undefined; timeout: string },
  help: string,
): { endpoint: string; target: string; timeoutMs: number } {
  if (!values.endpoint || !values.target) {
    throw new Error(`--endpoint and --target are required\n\n${help}`);
  }
  return {
    endpoint: values.endpoint,
    target: resolve(values.target),
    timeoutMs: flagTimeout('--timeout', values.timeout),
  };
}

// Whether our own deadline has passed (grpc-js's timer may fire a millisecond early).
function ranOut(started: number, timeoutMs: number): boolean {
  return Date.now() - started >= timeoutMs - 100;
}

// `error: CODE: message`; after our own deadline, also which --timeout ran out.
function reportRpcError(out: CommandOutput, err: unknown, timedOutAfter?: string): number {
  const code = (err as { code?: number }).code;
  const details = (err as { details?: string }).details ?? String(err);
  const name = code === undefined ? 'UNKNOWN' : (status[code] ?? String(code));
  const hint =
    timedOutAfter !== undefined && code === status.DEADLINE_EXCEEDED
      ? ` (no answer within --timeout ${timedOutAfter})`
      : '';
  const failure = commandFailure(new PluginCallError(`${name}: ${details}${hint}`), 'error');
  out.stderr.write(`${failure.line}\n`);
  return failure.exitCode;
}

/** Prints what the volume now holds, read back from the target directory. */
async function printSummary(
  out: CommandOutput,
  volumeId: string,
  target: string,
  context: Record<string, string>,
  fsGroup: string | undefined,
): Promise<void> {
  const parsed = parseVolumeAttributes(context, fsGroup ? { volumeMountGroup: fsGroup } : {});
  if (!parsed.ok) return;
  const { files, renewBeforeMs } = parsed.spec;
  // As every reader of a volume's files: through the current generation, regular files only
  // (never a blocking open of what else may lie there, never a link out of the target).
  const written = await readAtomically(target).catch(() => undefined);
  const certPem = written?.get(files.certificate);
  if (certPem === undefined) {
    // --continue-on-not-ready (or ${POD_IP}) in Kubernetes mode: mounted empty for now.
    out.stdout.write(
      `volume:       ${volumeId}\nwaiting:      published empty; its certificate comes once the pod is ready (cert-csi status)\n`,
    );
    return;
  }
  const cert = new X509Certificate(certPem);
  const notBefore = new Date(cert.validFrom);
  const notAfter = new Date(cert.validTo);
  const names = [files.privateKey, files.certificate, files.ca, files.pkcs12?.filename].filter(
    (n): n is string => Boolean(n),
  );
  const lines = [
    `volume:       ${volumeId}`,
    `subject:      ${cert.subject?.replaceAll('\n', ', ') || '(empty)'}`,
    `issuer:       ${cert.issuer?.replaceAll('\n', ', ') || '(empty)'}`,
    `SANs:         ${cert.subjectAltName ?? '(none)'}`,
    `not after:    ${notAfter.toISOString()}`,
    `next renewal: ${renewalTime(notBefore, notAfter, renewBeforeMs).toISOString()}`,
    `files:        ${names.map((n) => join(target, n)).join(' ')}`,
  ];
  out.stdout.write(`${lines.join('\n')}\n`);
}
