// A volume's last error as the status table shows it. The messages of a CertificateRequest
// wait are csi-lib's (`request "NAME" is pending: REASON`): kept as they are in the volume's
// metadata, logs and --json, but a table cell is cut at its width, and a request name (a
// UUID) first leaves no room for the reason. The cell puts the reason first, the name last.

// What a request-wait message says of the request, shortened for the cell.
const REQUEST_STATES: ReadonlyArray<[RegExp, string]> = [
  [/^is pending: /, 'pending: '],
  [/^has failed: /, 'failed: '],
  [/^has been denied by the approval plugin: /, 'denied: '],
  [/^has not yet been approved by approval plugin$/, 'not approved yet'],
  [/^has no ready condition$/, 'no Ready condition yet'],
  [/^has not been seen by this node yet$/, 'not seen by this node yet'],
];

const REQUEST_MESSAGE = /^(waiting for request: )?request "([^"]*)" (.*)$/s;

/** The message with its reason first and the request it names last, e.g. `pending: REASON (request NAME)`. */
export function errorCellText(message: string): string {
  const match = REQUEST_MESSAGE.exec(message);
  if (match === null) return message;
  const [, waiting, name = '', rest = ''] = match;
  let said = rest;
  for (const [pattern, replacement] of REQUEST_STATES) {
    if (pattern.test(said)) {
      said = said.replace(pattern, replacement);
      break;
    }
  }
  return `${waiting ? 'timed out, ' : ''}${said} (request ${name})`;
}
