import type { Condition } from '../../api/conditions.js';
import type {
  CertificateStatusReport,
  PrivateKeyState,
  RequestReport,
  SecretReport,
} from '../../certificates/certificate-status-report.js';

// The text of `cert-csi status --certificate`: cmctl status certificate's layout ("Key: value"
// lines, two-space indented sections, "- " list items, "<none>" for an unset time), with the
// current and the next CertificateRequest and the last failure added, the Issuer section taken
// from spec.issuerRef (the Issuer object is not read) and no Events. Pure: the report in, the
// text out.

const NONE = '<none>';

/** The report as cmctl-style text, ending with a newline. */
export function formatCertificateStatus(report: CertificateStatusReport): string {
  const lines = [
    `Name: ${report.name}`,
    `Namespace: ${report.namespace}`,
    `Created at: ${report.createdAt ?? NONE}`,
    'Conditions:',
    ...conditionLines(report.conditions, '  '),
    'DNS Names:',
    ...report.dnsNames.map((name) => `- ${oneLine(name)}`),
    'Issuer:',
    `  Name: ${report.issuerRef.name}`,
    `  Kind: ${report.issuerRef.kind}`,
    `  Group: ${report.issuerRef.group}`,
    ...secretLines(report.secret),
    `Not Before: ${report.notBefore ?? NONE}`,
    `Not After: ${report.notAfter ?? NONE}`,
    `Renewal Time: ${report.renewalTime ?? NONE}`,
    `Revision: ${report.revision ?? NONE}`,
    ...requestsLines(report),
    `Last Failure Time: ${report.lastFailureTime ?? NONE}`,
    `Failed Issuance Attempts: ${report.failedIssuanceAttempts ?? 0}`,
  ];
  return `${lines.join('\n')}\n`;
}

// cmctl's "  Type: Status, Reason: R, Message: M" per condition, or "No Conditions set".
function conditionLines(conditions: readonly Condition[], indent: string): string[] {
  if (conditions.length === 0) return [`${indent}No Conditions set`];
  return conditions.map(
    (c) =>
      `${indent}${c.type}: ${c.status}, Reason: ${oneLine(c.reason ?? '')}, Message: ${oneLine(c.message ?? '')}`,
  );
}

const PRIVATE_KEY_TEXT: Record<PrivateKeyState, string> = {
  missing: 'missing',
  matches: 'present, matches the certificate',
  mismatch: 'present, does NOT match the certificate',
  unreadable: 'unreadable',
  present: 'present',
};

function secretLines(secret: SecretReport): string[] {
  const lines = ['Secret:', `  Name: ${secret.name}`];
  if (!secret.found) {
    lines.push(`  Error: ${secret.error === undefined ? 'not found' : oneLine(secret.error)}`);
    return lines;
  }
  const annotations = Object.entries({
    'cert-manager.io/issuer-name': secret.issuerAnnotations.name,
    'cert-manager.io/issuer-kind': secret.issuerAnnotations.kind,
    'cert-manager.io/issuer-group': secret.issuerAnnotations.group,
  }).flatMap(([key, value]) => (value === undefined ? [] : [`${key}=${oneLine(value)}`]));
  lines.push(`  Issuer Annotations: ${annotations.length > 0 ? annotations.join(', ') : NONE}`);
  const leaf = secret.certificate;
  if (leaf) {
    const sans = [...leaf.dnsNames, ...leaf.ipAddresses, ...leaf.uris, ...leaf.emailAddresses].map(
      oneLine,
    );
    lines.push(
      `  Subject: ${oneLine(leaf.subject)}`,
      `  Issuer: ${oneLine(leaf.issuer)}`,
      `  Serial Number: ${leaf.serialNumber}`,
      `  Public Key: ${leaf.publicKey}`,
      `  Subject Alternative Names: ${sans.length > 0 ? sans.join(', ') : NONE}`,
      `  Not Before: ${leaf.notBefore}`,
      `  Not After: ${leaf.notAfter}`,
    );
  } else {
    lines.push(`  Certificate: ${oneLine(secret.certificateError ?? NONE)}`);
  }
  const key = secret.privateKey ?? 'missing';
  const keyError =
    secret.privateKeyError === undefined ? '' : `: ${oneLine(secret.privateKeyError)}`;
  lines.push(`  Private Key: ${PRIVATE_KEY_TEXT[key]}${keyError}`);
  lines.push(`  CA Certificate: ${secret.hasCA ? 'present' : 'missing'}`);
  return lines;
}

function requestsLines(report: CertificateStatusReport): string[] {
  const { requests } = report;
  const current = `CertificateRequest (current, revision ${requests.currentRevision ?? NONE}):`;
  const next = `CertificateRequest (next, revision ${requests.nextRevision}):`;
  if (requests.error !== undefined) {
    const error = `  Error: ${oneLine(requests.error)}`;
    return [current, error, next, error];
  }
  return [
    current,
    ...requestLines(
      requests.current,
      requests.currentRevision === undefined ? 'None before the first issuance' : undefined,
    ),
    next,
    ...requestLines(requests.next, undefined),
  ];
}

function requestLines(request: RequestReport | undefined, absent: string | undefined): string[] {
  if (!request) return [`  ${absent ?? 'No CertificateRequest found for this revision'}`];
  return [
    `  Name: ${request.name}`,
    `  Namespace: ${request.namespace}`,
    `  Created at: ${request.createdAt ?? NONE}`,
    '  Conditions:',
    ...conditionLines(request.conditions, '    '),
    ...(request.failureTime === undefined ? [] : [`  Failure Time: ${request.failureTime}`]),
  ];
}

// A value from the API on one line: line breaks and control characters become a space (the
// --json form keeps it whole).
function oneLine(text: string): string {
  return text.replace(/[\r\n\p{Cc}]+/gu, ' ');
}
