import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import t from 'tap';
import type { CertificateSpec } from '../../src/api/certificate.js';
import type { CertificateRequest } from '../../src/api/certificate-request.js';
import type { Secret } from '../../src/api/secret.js';
import {
  type PolicyInput,
  readinessViolation,
  triggerViolation,
} from '../../src/certificates/policy-chains.js';
import { signCertificate } from '../../src/pki/certificate.js';
import { createCsr, type ParsedCsr, parseCsr } from '../../src/pki/csr.js';
import { encodePrivateKey } from '../../src/pki/keys.js';
import {
  certificate,
  certificateFrom,
  withIssuerRef,
  withNamespace,
  withSpec,
  withStatus,
} from '../support/builders/index.js';

const H = 3_600_000;
const issuedAt = new Date('2026-01-01T00:00:00Z');
const ecdsa = () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
const b64 = (text: string) => Buffer.from(text).toString('base64');

const spec: CertificateSpec = {
  secretName: 'web-tls',
  issuerRef: { name: 'ca', kind: 'Issuer' },
  commonName: 'web.example.com',
  dnsNames: ['api.example.com'],
  privateKey: { algorithm: 'ECDSA' },
};

const web = certificate('web', withNamespace('apps'), withSpec(spec), withStatus({}));

async function csrFor(key: KeyObject, names: { cn: string; dns: string[] }): Promise<ParsedCsr> {
  return parseCsr(await createCsr({ key, subject: { commonName: names.cn }, dnsNames: names.dns }));
}

/** A 24h certificate for key with these names, signed by the key itself. */
async function issue(key: KeyObject, names = { cn: 'web.example.com', dns: ['api.example.com'] }) {
  const csr = await csrFor(key, names);
  return signCertificate(
    csr,
    { durationMs: 24 * H, isCA: false, usages: ['digital signature'] },
    { selfSigned: key },
    issuedAt,
  );
}

function secretWith(
  data: Record<string, string> | undefined,
  annotations?: Record<string, string>,
): Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: 'web-tls',
      namespace: 'apps',
      annotations: {
        'cert-manager.io/issuer-name': 'ca',
        'cert-manager.io/issuer-kind': 'Issuer',
        'cert-manager.io/issuer-group': 'cert-manager.io',
        'cert-manager.io/certificate-name': 'web',
        ...annotations,
      },
    },
    ...(data ? { data } : {}),
  };
}

function requestFor(csr: ParsedCsr, specOf: CertificateSpec): CertificateRequest {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'CertificateRequest',
    metadata: { name: 'web-1', namespace: 'apps' },
    spec: { request: b64(csr.pem), issuerRef: specOf.issuerRef },
  };
}

t.test('the trigger and readiness chains, in cert-manager order with its strings', async (t) => {
  const key = ecdsa();
  const keyPem = encodePrivateKey(key, 'PKCS8');
  const certPem = await issue(key);
  const good = { 'tls.key': b64(keyPem), 'tls.crt': b64(certPem) };
  const other = ecdsa();
  const otherCert = await issue(other);
  const currentCsr = await csrFor(key, { cn: 'web.example.com', dns: ['api.example.com'] });
  const inWindow = new Date(issuedAt.getTime() + 20 * H);
  const expired = new Date(issuedAt.getTime() + 25 * H);
  const quiet = new Date(issuedAt.getTime() + H);

  type Case = {
    name: string;
    input: Partial<PolicyInput>;
    trigger: [string, string | RegExp] | undefined;
    readiness?: [string, string | RegExp] | undefined;
  };
  const cases: Case[] = [
    {
      name: 'no Secret',
      input: { secret: undefined },
      trigger: ['DoesNotExist', 'Issuing certificate as Secret does not exist'],
    },
    {
      name: 'a Secret without data',
      input: { secret: secretWith(undefined) },
      trigger: ['MissingData', 'Issuing certificate as Secret does not contain any data'],
    },
    {
      name: 'no private key',
      input: { secret: secretWith({ 'tls.crt': good['tls.crt'] }) },
      trigger: ['MissingData', 'Issuing certificate as Secret does not contain a private key'],
    },
    {
      name: 'no certificate',
      input: { secret: secretWith({ 'tls.key': good['tls.key'] }) },
      trigger: ['MissingData', 'Issuing certificate as Secret does not contain a certificate'],
    },
    {
      name: 'an unreadable key',
      input: { secret: secretWith({ ...good, 'tls.key': b64('not a key') }) },
      trigger: [
        'InvalidKeyPair',
        /^Issuing certificate as Secret contains invalid private key data: ./,
      ],
    },
    {
      name: 'an unreadable certificate',
      input: { secret: secretWith({ ...good, 'tls.crt': b64('not a certificate') }) },
      trigger: [
        'InvalidCertificate',
        /^Issuing certificate as Secret contains an invalid certificate: ./,
      ],
    },
    {
      name: 'a key that is not the certificate’s',
      input: { secret: secretWith({ ...good, 'tls.crt': b64(otherCert) }) },
      trigger: [
        'InvalidKeyPair',
        'Issuing certificate as Secret contains a private key that does not match the certificate',
      ],
    },
    {
      name: 'issued by another issuer',
      input: { secret: secretWith(good, { 'cert-manager.io/issuer-name': 'old-ca' }) },
      trigger: [
        'IncorrectIssuer',
        'Issuing certificate as Secret was previously issued by "Issuer.cert-manager.io/old-ca"',
      ],
    },
    {
      name: 'no issuer annotations and a ClusterIssuer: the defaults differ (as in cert-manager)',
      input: {
        certificate: certificateFrom(web, withIssuerRef({ name: 'ca', kind: 'ClusterIssuer' })),
        secret: {
          ...secretWith(good),
          metadata: { name: 'web-tls', namespace: 'apps' },
        },
      },
      trigger: [
        'IncorrectIssuer',
        'Issuing certificate as Secret was previously issued by "Issuer.cert-manager.io/"',
      ],
    },
    {
      name: 'issued for another Certificate',
      input: { secret: secretWith(good, { 'cert-manager.io/certificate-name': 'api' }) },
      trigger: [
        'IncorrectCertificate',
        'Secret was issued for "api". If this message is not transient, you might have two conflicting Certificates pointing to the same secret.',
      ],
    },
    {
      name: 'a key of another algorithm than the spec’s',
      input: { certificate: certificateFrom(web, withSpec({ privateKey: { algorithm: 'RSA' } })) },
      trigger: [
        'SecretMismatch',
        'Existing private key is not up to date for spec: [spec.privateKey.algorithm]',
      ],
    },
    {
      name: 'the current request was made for another key',
      input: {
        currentRequest: requestFor(currentCsr, spec),
        currentCsr: await csrFor(other, { cn: 'web.example.com', dns: ['api.example.com'] }),
      },
      trigger: [
        'SecretMismatch',
        'Secret contains a private key that does not match the current CertificateRequest',
      ],
    },
    {
      name: 'the current request does not decode',
      input: { currentRequest: requestFor(currentCsr, spec), currentCsr: new Error('bad PEM') },
      trigger: [
        'InvalidCertificateRequest',
        'Failed to decode current CertificateRequest: bad PEM',
      ],
    },
    {
      name: 'the spec changed since the current request',
      input: {
        certificate: certificateFrom(
          web,
          withSpec({ dnsNames: ['api.example.com', 'www.example.com'] }),
        ),
        currentRequest: requestFor(currentCsr, spec),
        currentCsr,
      },
      trigger: [
        'RequestChanged',
        'Fields on existing CertificateRequest resource not up to date: [spec.dnsNames]',
      ],
    },
    {
      name: 'no current request: the Secret’s names are compared instead',
      input: { certificate: certificateFrom(web, withSpec({ dnsNames: ['www.example.com'] })) },
      trigger: [
        'SecretMismatch',
        'Issuing certificate as Existing issued Secret is not up to date for spec: [spec.dnsNames]',
      ],
    },
    {
      name: 'the common name moved into the DNS names: loosely equal',
      input: {
        certificate: certificateFrom(
          web,
          withSpec({
            commonName: 'api.example.com',
            dnsNames: ['web.example.com'],
          }),
        ),
      },
      trigger: undefined,
    },
    {
      name: 'an up-to-date certificate before its renewal time',
      input: { currentRequest: requestFor(currentCsr, spec), currentCsr },
      trigger: undefined,
    },
    {
      name: 'inside the renewal window: renew, and still Ready',
      input: {
        now: inWindow,
        certificate: certificateFrom(web, withStatus({ renewalTime: '2026-01-01T16:00:00Z' })),
      },
      trigger: [
        'Renewing',
        'Renewing certificate as renewal was scheduled at 2026-01-01 16:00:00 +0000 UTC',
      ],
      readiness: undefined,
    },
    {
      name: 'expired',
      input: { now: expired },
      trigger: ['Renewing', 'Renewing certificate as renewal was scheduled at <nil>'],
      readiness: ['Expired', 'Certificate expired on Fri, 02 Jan 2026 00:00:00 UTC'],
    },
    {
      name: 'renewal disabled: never renewed, still expires',
      input: {
        now: expired,
        certificate: certificateFrom(web, withSpec({ renewal: { policy: 'Disabled' } })),
      },
      trigger: undefined,
      readiness: ['Expired', 'Certificate expired on Fri, 02 Jan 2026 00:00:00 UTC'],
    },
    {
      name: 'an unreadable renewBefore counts as unset (validation refuses it before it is stored)',
      input: {
        now: inWindow,
        certificate: certificateFrom(
          web,
          withSpec({ renewBefore: 'soon' }),
          withStatus({ renewalTime: '2026-01-01T16:00:00Z' }),
        ),
      },
      trigger: [
        'Renewing',
        'Renewing certificate as renewal was scheduled at 2026-01-01 16:00:00 +0000 UTC',
      ],
      readiness: undefined,
    },
    {
      name: 'renewBeforePercentage moves the renewal time',
      input: {
        now: inWindow,
        certificate: certificateFrom(web, withSpec({ renewBeforePercentage: 10 })),
      },
      trigger: undefined,
    },
  ];
  for (const c of cases) {
    const input: PolicyInput = {
      certificate: certificateFrom(web),
      secret: secretWith(good),
      currentRequest: undefined,
      currentCsr: undefined,
      now: quiet,
      ...c.input,
    };
    const check = (
      got: ReturnType<typeof triggerViolation>,
      want: [string, string | RegExp] | undefined,
      chain: string,
    ) => {
      if (!want) t.equal(got, undefined, `${c.name}: no ${chain} violation`);
      else if (typeof want[1] === 'string')
        t.same(got, { reason: want[0], message: want[1] }, `${c.name}: ${chain} ${want[0]}`);
      else t.match(got, { reason: want[0], message: want[1] }, `${c.name}: ${chain} ${want[0]}`);
    };
    check(triggerViolation(input), c.trigger, 'trigger');
    // The chains share every check but the last; readiness differs only where a case says so.
    check(readinessViolation(input), 'readiness' in c ? c.readiness : c.trigger, 'readiness');
  }
});
