import t from 'tap';
import type {
  CertificateStatusReport,
  LeafSummary,
  SecretReport,
} from '../../src/certificates/certificate-status-report.js';
import { formatCertificateStatus } from '../../src/cli/certificate-status/certificate-status-text.js';

const leaf: LeafSummary = {
  subject: 'CN=web',
  issuer: 'CN=cert-csi test CA',
  serialNumber: '0a1b2c',
  notBefore: '2026-01-01T00:00:00Z',
  notAfter: '2026-04-01T00:00:00Z',
  publicKey: 'ECDSA P-256',
  dnsNames: ['web.apps.svc'],
  ipAddresses: ['10.0.0.1'],
  uris: [],
  emailAddresses: [],
};

const issuedSecret: SecretReport = {
  name: 'web-tls',
  found: true,
  issuerAnnotations: { name: 'ca', kind: 'ClusterIssuer', group: 'cert-manager.io' },
  certificate: leaf,
  privateKey: 'matches',
  hasCA: true,
};

const full: CertificateStatusReport = {
  name: 'web',
  namespace: 'apps',
  createdAt: '2025-12-31T00:00:00Z',
  generation: 1,
  issuerRef: { name: 'ca', kind: 'ClusterIssuer', group: 'cert-manager.io' },
  dnsNames: ['web.apps.svc', 'web'],
  conditions: [
    {
      type: 'Ready',
      status: 'True',
      reason: 'Ready',
      message: 'Certificate is up to date and has not expired',
    },
    {
      type: 'Issuing',
      status: 'True',
      reason: 'ManuallyTriggered',
      message: 'Certificate re-issuance manually triggered',
    },
  ],
  notBefore: '2026-01-01T00:00:00Z',
  notAfter: '2026-04-01T00:00:00Z',
  renewalTime: '2026-03-02T00:00:00Z',
  revision: 1,
  failedIssuanceAttempts: 0,
  secret: issuedSecret,
  requests: {
    currentRevision: 1,
    nextRevision: 2,
    current: {
      name: 'web-1',
      namespace: 'apps',
      createdAt: '2026-01-01T00:00:00Z',
      conditions: [
        { type: 'Approved', status: 'True', reason: 'cert-manager.io', message: 'approved' },
        { type: 'Ready', status: 'True', reason: 'Issued', message: 'Certificate fetched' },
      ],
    },
  },
};

t.test('the whole text of an issued Certificate being renewed by hand', (t) => {
  t.equal(
    formatCertificateStatus(full),
    `Name: web
Namespace: apps
Created at: 2025-12-31T00:00:00Z
Conditions:
  Ready: True, Reason: Ready, Message: Certificate is up to date and has not expired
  Issuing: True, Reason: ManuallyTriggered, Message: Certificate re-issuance manually triggered
DNS Names:
- web.apps.svc
- web
Issuer:
  Name: ca
  Kind: ClusterIssuer
  Group: cert-manager.io
Secret:
  Name: web-tls
  Issuer Annotations: cert-manager.io/issuer-name=ca, cert-manager.io/issuer-kind=ClusterIssuer, cert-manager.io/issuer-group=cert-manager.io
  Subject: CN=web
  Issuer: CN=cert-csi test CA
  Serial Number: 0a1b2c
  Public Key: ECDSA P-256
  Subject Alternative Names: web.apps.svc, 10.0.0.1
  Not Before: 2026-01-01T00:00:00Z
  Not After: 2026-04-01T00:00:00Z
  Private Key: present, matches the certificate
  CA Certificate: present
Not Before: 2026-01-01T00:00:00Z
Not After: 2026-04-01T00:00:00Z
Renewal Time: 2026-03-02T00:00:00Z
Revision: 1
CertificateRequest (current, revision 1):
  Name: web-1
  Namespace: apps
  Created at: 2026-01-01T00:00:00Z
  Conditions:
    Approved: True, Reason: cert-manager.io, Message: approved
    Ready: True, Reason: Issued, Message: Certificate fetched
CertificateRequest (next, revision 2):
  No CertificateRequest found for this revision
Last Failure Time: <none>
Failed Issuance Attempts: 0
`,
  );
  t.end();
});

/** A variant of the full report → lines that must appear (exactly, as whole lines), and must not. */
const cases: Array<{
  name: string;
  report: Partial<CertificateStatusReport>;
  lines: string[];
  absent?: string[];
}> = [
  {
    name: 'a new Certificate: no status yet',
    report: {
      conditions: [],
      dnsNames: [],
      notBefore: undefined as never,
      notAfter: undefined as never,
      renewalTime: undefined as never,
      revision: undefined as never,
      failedIssuanceAttempts: undefined as never,
      secret: { name: 'web-tls', found: false, issuerAnnotations: {} },
      requests: { nextRevision: 1 },
    },
    lines: [
      'Conditions:',
      '  No Conditions set',
      'DNS Names:',
      'Issuer:',
      'Secret:',
      '  Name: web-tls',
      '  Error: not found',
      'Not Before: <none>',
      'Not After: <none>',
      'Renewal Time: <none>',
      'Revision: <none>',
      'CertificateRequest (current, revision <none>):',
      '  None before the first issuance',
      'CertificateRequest (next, revision 1):',
      '  No CertificateRequest found for this revision',
      'Failed Issuance Attempts: 0',
    ],
    absent: ['  Private Key: missing'],
  },
  {
    name: 'the last failure',
    report: {
      lastFailureTime: '2026-02-01T00:00:00Z',
      failedIssuanceAttempts: 3,
      conditions: [
        { type: 'Issuing', status: 'False', reason: 'Failed', message: 'the CA said\nno' },
      ],
      requests: {
        currentRevision: 1,
        nextRevision: 2,
        next: {
          name: 'web-2',
          namespace: 'apps',
          conditions: [],
          failureTime: '2026-02-01T00:00:00Z',
        },
      },
    },
    lines: [
      '  Issuing: False, Reason: Failed, Message: the CA said no',
      'CertificateRequest (current, revision 1):',
      '  No CertificateRequest found for this revision',
      'CertificateRequest (next, revision 2):',
      '  Name: web-2',
      '  Created at: <none>',
      '    No Conditions set',
      '  Failure Time: 2026-02-01T00:00:00Z',
      'Last Failure Time: 2026-02-01T00:00:00Z',
      'Failed Issuance Attempts: 3',
    ],
  },
  {
    name: 'requests that cannot be told apart',
    report: { requests: { currentRevision: 1, nextRevision: 2, error: 'multiple …' } },
    lines: [
      'CertificateRequest (current, revision 1):',
      'CertificateRequest (next, revision 2):',
      '  Error: multiple …',
    ],
  },
  {
    name: 'a Secret that could not be read',
    report: {
      secret: { name: 'web-tls', found: false, error: 'forbidden', issuerAnnotations: {} },
    },
    lines: ['  Name: web-tls', '  Error: forbidden'],
    absent: ['  Issuer Annotations: <none>'],
  },
  {
    name: 'a Secret written by hand: no annotations, a key of another certificate, no CA',
    report: {
      secret: {
        ...issuedSecret,
        issuerAnnotations: {},
        privateKey: 'mismatch',
        hasCA: false,
        certificate: { ...leaf, dnsNames: [], ipAddresses: [] },
      },
    },
    lines: [
      '  Issuer Annotations: <none>',
      '  Subject Alternative Names: <none>',
      '  Private Key: present, does NOT match the certificate',
      '  CA Certificate: missing',
    ],
  },
  {
    name: 'a Secret with a broken certificate and key',
    report: {
      secret: {
        name: 'web-tls',
        found: true,
        issuerAnnotations: { name: 'ca' },
        certificateError: 'tls.crt is not set',
        privateKey: 'unreadable',
        privateKeyError: 'cannot decode private key: no private key PEM block found',
        hasCA: false,
      },
    },
    lines: [
      '  Issuer Annotations: cert-manager.io/issuer-name=ca',
      '  Certificate: tls.crt is not set',
      '  Private Key: unreadable: cannot decode private key: no private key PEM block found',
    ],
    absent: ['  Subject: CN=web'],
  },
  {
    name: 'a key present with nothing to compare it with',
    report: {
      secret: { ...issuedSecret, certificate: undefined as never, privateKey: 'present' },
    },
    lines: ['  Private Key: present', '  Certificate: <none>'],
  },
];

t.test('variants: each shows what it must, in one line per value', (t) => {
  for (const { name, report, lines, absent = [] } of cases) {
    const merged = { ...full, ...report } as CertificateStatusReport;
    // Fields set to undefined in a variant are absent from the report, as the builder makes it.
    for (const [key, value] of Object.entries(report)) {
      if (value === undefined) delete (merged as unknown as Record<string, unknown>)[key];
    }
    if (merged.secret.certificate === undefined) delete merged.secret.certificate;
    const text = formatCertificateStatus(merged);
    const all = text.split('\n');
    t.equal(all.at(-1), '', `${name}: ends with a newline`);
    for (const line of lines) t.ok(all.includes(line), `${name}: ${JSON.stringify(line)}`);
    for (const line of absent) t.notOk(all.includes(line), `${name}: no ${JSON.stringify(line)}`);
    t.notOk(
      all.some((l) => l.endsWith(' ')),
      `${name}: no trailing spaces`,
    );
  }
  t.end();
});
