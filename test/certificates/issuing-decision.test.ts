import { generateKeyPairSync } from 'node:crypto';
import t from 'tap';
import type { Certificate } from '../../src/api/certificate.js';
import type { CertificateRequest } from '../../src/api/certificate-request.js';
import type { Condition } from '../../src/api/conditions.js';
import {
  failedIssuanceStatus,
  issuedStatus,
  issuingDecision,
} from '../../src/certificates/issuing-decision.js';
import { buildNextRequest, type OwnedRequest } from '../../src/certificates/next-request-plan.js';
import { signCertificate } from '../../src/pki/certificate.js';
import { createCsr, parseCsr } from '../../src/pki/csr.js';

const ec = () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
const key = ec();
const b64 = (text: string) => Buffer.from(text).toString('base64');
const now = new Date('2026-01-01T12:00:00Z');

const certificate: Certificate = {
  apiVersion: 'cert-manager.io/v1',
  kind: 'Certificate',
  metadata: { name: 'web', namespace: 'apps', uid: 'u', generation: 2 },
  spec: {
    secretName: 'web-tls',
    issuerRef: { name: 'ca' },
    dnsNames: ['web.example.com'],
    privateKey: { algorithm: 'ECDSA' },
  },
  status: {
    revision: 1,
    failedIssuanceAttempts: 1,
    lastFailureTime: '2026-01-01T09:00:00Z',
    conditions: [
      { type: 'Ready', status: 'True', reason: 'Ready' },
      {
        type: 'Issuing',
        status: 'True',
        reason: 'Renewing',
        lastTransitionTime: '2026-01-01T10:00:00Z',
      },
    ],
  },
};

t.test('when issuing fails, waits or issues (cert-manager’s issuing controller)', async (t) => {
  const csrPem = await createCsr({ key, dnsNames: ['web.example.com'] });
  const csr = await parseCsr(csrPem);
  const sign = (signingKey = key, at = now) =>
    signCertificate(
      csr,
      { durationMs: 3_600_000, isCA: false, usages: [] },
      { selfSigned: signingKey },
      at,
    ).catch(async () => {
      // Signing for another key: a CSR of that key, so the leaf carries the wrong public key.
      const other = await parseCsr(
        await createCsr({ key: signingKey, dnsNames: ['web.example.com'] }),
      );
      return signCertificate(
        other,
        { durationMs: 3_600_000, isCA: false, usages: [] },
        { selfSigned: signingKey },
        at,
      );
    });
  const issuedPem = await sign();
  const request = (
    conditions: Condition[],
    extra: Partial<NonNullable<CertificateRequest['status']>> = {},
  ): OwnedRequest => ({
    request: {
      ...buildNextRequest({ certificate, revision: 2, keySecretName: 'k', csrPem }),
      status: { conditions, ...extra },
    },
    csr,
  });
  const ready = (reason: string, message = ''): Condition => ({
    type: 'Ready',
    status: reason === 'Issued' ? 'True' : 'False',
    reason,
    message,
  });
  const retried = 'The certificate request has failed to complete and will be retried: ';
  const decide = (owned: OwnedRequest[], nextKey = key) => {
    const decision = issuingDecision({ certificate, nextKey, owned, now });
    return decision.action === 'issue'
      ? { action: 'issue', request: decision.request.metadata.name }
      : decision;
  };
  const cases: Array<[string, OwnedRequest[], unknown]> = [
    ['no request yet', [], { action: 'wait' }],
    ['pending', [request([ready('Pending', 'waiting')])], { action: 'wait' }],
    ['no Ready condition', [request([])], { action: 'wait' }],
    [
      'denied',
      [
        request(
          [
            { type: 'Denied', status: 'True', reason: 'PolicyDenied', message: 'not allowed' },
            ready('Issued'),
          ],
          { certificate: b64(issuedPem) },
        ),
      ],
      { action: 'fail', reason: 'PolicyDenied', message: `${retried}not allowed` },
    ],
    [
      'invalid request',
      [request([{ type: 'InvalidRequest', status: 'True', reason: 'BadCSR', message: 'no' }])],
      { action: 'fail', reason: 'BadCSR', message: `${retried}no` },
    ],
    [
      'failed',
      [request([ready('Failed', 'CA expired')], { failureTime: '2026-01-01T11:00:00Z' })],
      { action: 'fail', reason: 'Failed', message: `${retried}CA expired` },
    ],
    [
      'failed before this attempt began',
      [request([ready('Failed', 'old')], { failureTime: '2026-01-01T09:30:00Z' })],
      { action: 'wait' },
    ],
    [
      'issued',
      [request([ready('Issued')], { certificate: b64(issuedPem) })],
      { action: 'issue', request: 'web-2' },
    ],
    [
      'issued garbage',
      [request([ready('Issued')], { certificate: b64('garbage') })],
      {
        action: 'fail',
        reason: 'InvalidCertificate',
        message: new RegExp(
          `^${retried}Issuer returned an invalid certificate: failed to decode: .`,
        ),
      },
    ],
    [
      'issued for another key',
      [request([ready('Issued')], { certificate: b64(await sign(ec())) })],
      {
        action: 'fail',
        reason: 'InvalidCertificate',
        message: `${retried}Issuer returned a certificate with a public key that does not match the CSR. This usually indicates a misconfigured issuer.`,
      },
    ],
    [
      'issued already expired',
      [
        request([ready('Issued')], {
          certificate: b64(await sign(key, new Date('2025-01-01T00:00:00Z'))),
        }),
      ],
      {
        action: 'fail',
        reason: 'InvalidCertificate',
        message: `${retried}Issuer returned an already expired certificate (notAfter: 2025-01-01T01:00:00Z). This usually indicates an expired CA certificate in the issuer.`,
      },
    ],
    [
      'two requests of the revision',
      [request([ready('Issued')]), request([ready('Issued')])],
      { action: 'wait' },
    ],
  ];
  for (const [name, owned, expected] of cases) {
    // Exact unless the case gives a pattern (an error text from the platform).
    if ((expected as { message?: unknown }).message instanceof RegExp)
      t.match(decide(owned), expected, name);
    else t.same(decide(owned), expected, name);
  }
  t.same(
    decide([request([ready('Issued')], { certificate: b64(issuedPem) })], ec()),
    { action: 'wait' },
    'the next key is another than the CSR’s',
  );
});

t.test('the status after a failure and after issuance', async (t) => {
  t.same(failedIssuanceStatus(certificate, { reason: 'Failed', message: 'm' }, now), {
    revision: 1,
    failedIssuanceAttempts: 2,
    lastFailureTime: '2026-01-01T12:00:00Z',
    conditions: [
      { type: 'Ready', status: 'True', reason: 'Ready' },
      {
        type: 'Issuing',
        status: 'False',
        reason: 'Failed',
        message: 'm',
        observedGeneration: 2,
        lastTransitionTime: '2026-01-01T12:00:00Z',
      },
    ],
  });
  t.same(issuedStatus(certificate), {
    revision: 2,
    conditions: [{ type: 'Ready', status: 'True', reason: 'Ready' }],
  });
});

t.test('waiting on what is not there yet, and statuses from scratch', async (t) => {
  const csrPem = await createCsr({ key, dnsNames: ['web.example.com'] });
  const csr = await parseCsr(csrPem);
  const owned = (conditions: Condition[], parsed: OwnedRequest['csr'] = csr): OwnedRequest => ({
    request: {
      ...buildNextRequest({ certificate, revision: 2, keySecretName: 'k', csrPem }),
      status: { conditions },
    },
    csr: parsed,
  });
  const decide = (input: Partial<Parameters<typeof issuingDecision>[0]>) =>
    issuingDecision({ certificate, nextKey: key, owned: [], now, ...input }).action;
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const failed: Condition = { type: 'Ready', status: 'False', reason: 'Failed' };
  t.equal(decide({ nextKey: undefined, owned: [owned([failed])] }), 'wait', 'no next key yet');
  t.equal(
    decide({ nextKey: rsa, owned: [owned([failed])] }),
    'wait',
    'a next key of another algorithm (the keymanager replaces it)',
  );
  t.equal(
    decide({ owned: [owned([failed], new Error('bad'))] }),
    'wait',
    'an undecodable CSR (the requestmanager replaces it)',
  );
  const notIssuing: Certificate = { ...certificate, status: { revision: 1 } };
  t.equal(
    decide({ certificate: notIssuing, owned: [owned([failed])] }),
    'wait',
    'no Issuing condition',
  );
  t.equal(
    decide({ owned: [owned([{ type: 'Ready', status: 'False', reason: 'SomethingElse' }])] }),
    'wait',
    'an unknown Ready reason',
  );
  t.same(
    issuingDecision({
      certificate,
      nextKey: key,
      owned: [owned([{ type: 'Denied', status: 'True' }])],
      now,
    }),
    {
      action: 'fail',
      reason: '',
      message: 'The certificate request has failed to complete and will be retried: ',
    },
    'a Denied condition without reason or message',
  );
  const bare: Certificate = { ...certificate, metadata: { name: 'web', namespace: 'apps' } };
  delete bare.status;
  t.same(failedIssuanceStatus(bare, { reason: 'Failed', message: 'm' }, now), {
    lastFailureTime: '2026-01-01T12:00:00Z',
    failedIssuanceAttempts: 1,
    conditions: [
      {
        type: 'Issuing',
        status: 'False',
        reason: 'Failed',
        message: 'm',
        lastTransitionTime: '2026-01-01T12:00:00Z',
      },
    ],
  });
  t.same(issuedStatus(bare), { revision: 1, conditions: [] });
});
