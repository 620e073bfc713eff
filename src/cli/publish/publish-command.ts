import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { quoted, shortened } from '../../api/echoed-value.js';
import { ATTRIBUTE_NAMES, ATTRIBUTE_PREFIX, POD_IPS_KEY } from '../../attributes/attribute-keys.js';
import { parseVolumeAttributes } from '../../attributes/volume-attributes.js';
import { didYouMean } from '../../base/edit-distance.js';
import { errorMessage } from '../../base/error-message.js';
import { CsiClient } from '../../driver/csi-client.js';
import { readAtomically } from '../../fs/atomic-writer.js';
import { renewalTime } from '../../pki/renewal-time.js';
import { type CommandOutput, processOutput } from '../common/command-output.js';
import { startCommand, usageError } from '../common/command-start.js';
import { ranOut, reportRpcError, requireCallFlags } from '../common/csi-call.js';
import { UsageError } from '../common/usage-error.js';
import { PUBLISH_COMMAND, type PublishFlags } from './publish-flags.js';

/** `cert-csi publish`: NodePublishVolume from the command line, then a summary. */
export async function runPublish(
  args: string[],
  out: CommandOutput = processOutput,
): Promise<number> {
  const started = startCommand(args, out, PUBLISH_COMMAND);
  if (typeof started === 'number') return started;
  const { values } = started;
  let call: ReturnType<typeof requireCallFlags>;
  let context: Record<string, string>;
  try {
    call = requireCallFlags(values);
    context = volumeContext(values);
  } catch (err) {
    // Both throw UsageErrors only.
    return usageError(out, PUBLISH_COMMAND, errorMessage(err));
  }
  const { endpoint, target, timeoutMs } = call;
  const volumeId = values['volume-id'] as string;
  const client = new CsiClient(endpoint);
  const callStarted = Date.now();
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
    return reportRpcError(out, PUBLISH_COMMAND.name, err, {
      endpoint: values.endpoint as string,
      volumeId,
      timedOutAfter: ranOut(callStarted, timeoutMs) ? values.timeout : undefined,
    });
  } finally {
    client.close();
  }
  await printSummary(out, volumeId, target, context, values['fs-group']);
  return 0;
}

/**
 * The volume context kubelet would send for these flags, or a UsageError naming the flag that
 * cannot be sent: a --pod-ip that is no IP, an --attr that is no KEY=VALUE or names no
 * attribute (with the nearest one as a "did you mean").
 */
function volumeContext(values: PublishFlags['values']): Record<string, string> {
  const context: Record<string, string> = {
    'csi.storage.k8s.io/ephemeral': 'true',
    'csi.storage.k8s.io/pod.name': values['pod-name'],
    'csi.storage.k8s.io/pod.namespace': values['pod-namespace'],
    'csi.storage.k8s.io/pod.uid': values['pod-uid'],
    'csi.storage.k8s.io/serviceAccount.name': values['service-account'],
  };
  for (const ip of values['pod-ip']) {
    if (isIP(ip) === 0) throw new UsageError(`--pod-ip ${quoted(ip)}: not an IP address`);
  }
  if (values['pod-ip'].length > 0) context[POD_IPS_KEY] = values['pod-ip'].join(',');
  for (const pair of values.attr) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--attr ${quoted(pair)}: expected KEY=VALUE`);
    const given = pair.slice(0, eq);
    const key = given.includes('/') ? given : `${ATTRIBUTE_PREFIX}${given}`;
    const name = key.startsWith(ATTRIBUTE_PREFIX) ? key.slice(ATTRIBUTE_PREFIX.length) : undefined;
    if (name !== undefined && !(ATTRIBUTE_NAMES as readonly string[]).includes(name)) {
      const hint = didYouMean(name, ATTRIBUTE_NAMES) || '; the attributes are listed in --help';
      throw new UsageError(`--attr ${shortened(given)}: unknown attribute${hint}`);
    }
    context[key] = pair.slice(eq + 1);
  }
  return context;
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
  if (written === undefined || certPem === undefined) {
    // --continue-on-not-ready (or ${POD_IP}) in Kubernetes mode: mounted empty for now.
    out.stdout.write(
      `volume:       ${volumeId}\nwaiting:      published empty; its certificate comes once the pod is ready (cert-csi status)\n`,
    );
    return;
  }
  const cert = new X509Certificate(certPem);
  const notBefore = new Date(cert.validFrom);
  const notAfter = new Date(cert.validTo);
  // Every file the volume holds, as the plugin wrote them: the attributes' order first (key,
  // certificate, CA, then the extra outputs), then any other.
  const named = [
    files.privateKey,
    files.certificate,
    files.ca,
    files.pkcs12?.filename,
    files.combinedPem,
    files.jks?.filename,
    files.jks?.truststoreFilename,
  ].filter((n): n is string => n !== undefined && written.has(n));
  const names = [...named, ...[...written.keys()].filter((n) => !named.includes(n))];
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
