import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { quoted } from '../../api/echoed-value.js';
import { POD_IPS_KEY } from '../../attributes/attribute-keys.js';
import { parseVolumeAttributes } from '../../attributes/volume-attributes.js';
import { CsiClient } from '../../driver/csi-client.js';
import { parseEndpoint } from '../../driver/endpoint.js';
import { readAtomically } from '../../fs/atomic-writer.js';
import { renewalTime } from '../../pki/renewal-time.js';
import { type CommandOutput, processOutput } from '../common/command-output.js';
import { ranOut, reportRpcError, requireCallFlags } from '../common/csi-call.js';
import { parseFlags } from '../common/flag-table.js';
import { PUBLISH_FLAGS, PUBLISH_HELP } from './publish-flags.js';

/** `cert-csi publish`: NodePublishVolume from the command line, then a summary. */
export async function runPublish(
  args: string[],
  out: CommandOutput = processOutput,
): Promise<number> {
  const { values } = parseFlags(PUBLISH_FLAGS, args);
  if (values.help) {
    out.stdout.write(PUBLISH_HELP);
    return 0;
  }
  const { endpoint, target, timeoutMs } = requireCallFlags(values, PUBLISH_HELP);
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
