import { type NamespacedName, parseNamespacedName } from '../../api/namespaced-name.js';
import { errorMessage } from '../../base/error-message.js';
import {
  type CertificateStatusReport,
  readCertificateStatus,
} from '../../certificates/certificate-status-report.js';
import { reportFailure } from '../common/command-failure.js';
import type { CommandOutput } from '../common/command-output.js';
import { usageError } from '../common/command-start.js';
import { objectSource } from '../common/object-source.js';
import { STATUS_COMMAND, type StatusFlags } from '../status/status-flags.js';
import { formatCertificateStatus } from './certificate-status-text.js';

/**
 * `status --certificate NAMESPACE/NAME` (cmctl status certificate): from the embedded
 * plugin's state dir, or from a cluster.
 */
export async function certificateStatus(flags: StatusFlags, out: CommandOutput): Promise<number> {
  const { values, explicit } = flags;
  let ref: NamespacedName;
  try {
    ref = parseNamespacedName(values.certificate ?? '');
  } catch (err) {
    return usageError(out, STATUS_COMMAND, `--certificate: ${errorMessage(err)}`);
  }
  if (explicit.has('namespace')) {
    return usageError(out, STATUS_COMMAND, '--namespace: only used with --requests');
  }
  const store = await objectSource(flags, out, STATUS_COMMAND, {
    flag: '--certificate',
    what: 'a Certificate',
  });
  if (typeof store === 'number') return store;
  let report: CertificateStatusReport;
  try {
    report = await readCertificateStatus(store, ref);
  } catch (err) {
    return reportFailure(out.stderr, err, 'cert-csi status', 'status');
  }
  out.stdout.write(
    values.json ? `${JSON.stringify(report, null, 2)}\n` : formatCertificateStatus(report),
  );
  return 0;
}
