import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { status } from '@grpc/grpc-js';
import { CsiClient } from '../driver/csi-client.js';
import { parseEndpoint } from '../driver/endpoint.js';
import { parseVolumeAttributes } from '../driver/volume-attributes.js';
import { renewalTime } from '../pki/renewal-time.js';

export const PUBLISH_HELP = `Usage: cert-csi publish --endpoint URL --volume-id ID --target DIR [flags] --attr KEY=VALUE...

Asks a running plugin to publish a volume, as kubelet does for a pod's inline CSI volume.

Flags:
  --endpoint URL          the plugin's CSI socket (unix://PATH)
  --volume-id ID          volume id (kubelet uses csi-<sha256>)
  --target DIR            where the files appear
  --attr KEY=VALUE        a volume attribute; repeat it. A key without a prefix gets
                          csi.cert-manager.io/ (issuer-name=x means csi.cert-manager.io/issuer-name=x)
  --pod-name NAME         (default cert-csi-cli)
  --pod-namespace NS      namespace of the CertificateRequest (default default)
  --pod-uid UID           (default: none, no owner reference)
  --service-account NAME  (default default)
  --fs-group GID          the pod's fsGroup, sent as volume_mount_group
`;

export const UNPUBLISH_HELP = `Usage: cert-csi unpublish --endpoint URL --volume-id ID --target DIR

Asks a running plugin to unpublish a volume: unmount, stop renewal, remove its files.
`;

/** `cert-csi publish`: NodePublishVolume from the command line, then a summary. */
export async function runPublish(args: string[]): Promise<number> {
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
      'fs-group': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(PUBLISH_HELP);
    return 0;
  }
  const { endpoint, target } = requireFlags(values, PUBLISH_HELP);
  const volumeId = values['volume-id'] ?? '';
  const context: Record<string, string> = {
    'csi.storage.k8s.io/ephemeral': 'true',
    'csi.storage.k8s.io/pod.name': values['pod-name'],
    'csi.storage.k8s.io/pod.namespace': values['pod-namespace'],
    'csi.storage.k8s.io/pod.uid': values['pod-uid'],
    'csi.storage.k8s.io/serviceAccount.name': values['service-account'],
  };
  for (const pair of values.attr) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error(`--attr "${pair}": expected KEY=VALUE`);
    const key = pair.slice(0, eq);
    context[key.includes('/') ? key : `csi.cert-manager.io/${key}`] = pair.slice(eq + 1);
  }
  const client = new CsiClient(parseEndpoint(endpoint));
  try {
    await client.nodeCall('NodePublishVolume', {
      volume_id: volumeId,
      target_path: target,
      readonly: true,
      volume_context: context,
      volume_capability: {
        mount: { fs_type: '', mount_flags: [], volume_mount_group: values['fs-group'] ?? '' },
        access_mode: { mode: 'SINGLE_NODE_READER_ONLY' },
      },
    });
  } catch (err) {
    return reportRpcError(err);
  } finally {
    client.close();
  }
  await printSummary(volumeId, target, context, values['fs-group']);
  return 0;
}

/** `cert-csi unpublish`: NodeUnpublishVolume from the command line. */
export async function runUnpublish(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      endpoint: { type: 'string' },
      'volume-id': { type: 'string' },
      target: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(UNPUBLISH_HELP);
    return 0;
  }
  const { endpoint, target } = requireFlags(values, UNPUBLISH_HELP);
  const client = new CsiClient(parseEndpoint(endpoint));
  try {
    await client.nodeCall('NodeUnpublishVolume', {
      volume_id: values['volume-id'] ?? '',
      target_path: target,
    });
  } catch (err) {
    return reportRpcError(err);
  } finally {
    client.close();
  }
  process.stdout.write(`unpublished ${values['volume-id'] ?? ''} from ${target}\n`);
  return 0;
}

function requireFlags(
  values: { endpoint?: string | undefined; target?: string | undefined },
  help: string,
): { endpoint: string; target: string } {
  if (!values.endpoint || !values.target) {
    throw new Error(`--endpoint and --target are required\n\n${help}`);
  }
  return { endpoint: values.endpoint, target: values.target };
}

function reportRpcError(err: unknown): number {
  const code = (err as { code?: number }).code;
  const details = (err as { details?: string }).details ?? String(err);
  const name = code === undefined ? 'UNKNOWN' : (status[code] ?? String(code));
  process.stderr.write(`error: ${name}: ${details}\n`);
  return 1;
}

/** Prints what the volume now holds, read back from the target directory. */
async function printSummary(
  volumeId: string,
  target: string,
  context: Record<string, string>,
  fsGroup: string | undefined,
): Promise<void> {
  const parsed = parseVolumeAttributes(context, fsGroup ? { volumeMountGroup: fsGroup } : {});
  if (!parsed.ok) return;
  const { files, renewBeforeMs } = parsed.spec;
  const cert = new X509Certificate(await readFile(join(target, files.certificate)));
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
  process.stdout.write(`${lines.join('\n')}\n`);
}
