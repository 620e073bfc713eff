import { shortened } from '../../api/echoed-value.js';
import { dnsLabelProblem } from '../../attributes/object-names.js';
import {
  type RequestAwaitingApproval,
  readRequestsAwaitingApproval,
} from '../../issuer/certificaterequests/awaiting-approval.js';
import { reportFailure } from '../common/command-failure.js';
import type { CommandOutput } from '../common/command-output.js';
import { usageError } from '../common/command-start.js';
import { objectSource } from '../common/object-source.js';
import { STATUS_COMMAND, type StatusFlags } from '../status/status-flags.js';
import { formatRequestsTable } from './requests-status-text.js';

/** `status --requests`: the CertificateRequests no approver has decided on yet. */
export async function requestsStatus(flags: StatusFlags, out: CommandOutput): Promise<number> {
  const { values } = flags;
  const namespace = values.namespace;
  if (namespace !== undefined) {
    const problem = dnsLabelProblem(namespace);
    if (problem !== undefined) {
      return usageError(out, STATUS_COMMAND, `--namespace: ${shortened(namespace)}: ${problem}`);
    }
  }
  const store = await objectSource(flags, out, STATUS_COMMAND, {
    flag: '--requests',
    what: 'the CertificateRequests',
  });
  if (typeof store === 'number') return store;
  let rows: RequestAwaitingApproval[];
  try {
    rows = await readRequestsAwaitingApproval(store, namespace);
  } catch (err) {
    return reportFailure(
      out.stderr,
      err,
      'cert-csi status: cannot list CertificateRequests',
      'status',
    );
  }
  const where = namespace === undefined ? 'any namespace' : `namespace ${namespace}`;
  out.stdout.write(
    values.json ? `${JSON.stringify(rows, null, 2)}\n` : formatRequestsTable(rows, where),
  );
  return 0;
}
