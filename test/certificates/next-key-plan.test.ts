import { generateKeyPairSync } from 'node:crypto';
import t from 'tap';
import type { CertificatePrivateKey } from '../../src/api/certificate.js';
import type { Secret } from '../../src/api/secret.js';
import {
  keyStoredEvent,
  type NextKeySecret,
  nextKeyPlan,
  type StoredKey,
} from '../../src/certificates/next-key-plan.js';
import {
  certificate,
  certificateFrom,
  secret,
  withConditions,
  withNamespace,
  withSpec,
  withStatus,
} from '../support/builders/index.js';

const p256 = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
const p384 = generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).privateKey;

const web = certificate(
  'web',
  withNamespace('apps'),
  withSpec({ secretName: 'web-tls', issuerRef: { name: 'ca' }, dnsNames: ['web'] }),
  withStatus({}),
);
/** web while it is being issued. */
const renewing = certificateFrom(web, withConditions([{ type: 'Issuing', status: 'True' }]));
const next = (name: string, key: StoredKey): NextKeySecret => ({
  secret: secret(name, withNamespace('apps')),
  key,
});
const withKey = (key = p256): StoredKey => ({ state: 'key', key });
const ecdsa: CertificatePrivateKey = { algorithm: 'ECDSA' };
const never: CertificatePrivateKey = { algorithm: 'ECDSA', rotationPolicy: 'Never' };

type Plan = ReturnType<typeof nextKeyPlan>;
/** A plan with Secrets as names and keys as markers, for table comparison. */
function summary(plan: Plan): unknown {
  const names = (list: Secret[]) => list.map((s) => s.metadata.name);
  switch (plan.action) {
    case 'clean-up':
      return { ...plan, remove: names(plan.remove) };
    case 'remove':
      return { ...plan, remove: names(plan.remove) };
    case 'create':
      return {
        ...plan,
        key:
          plan.key === 'generate' ? 'generate' : plan.key === p256 ? 'reuse p256' : 'reuse other',
      };
    default:
      return plan;
  }
}

t.test('the keymanager’s step for each situation (as in cert-manager)', async (t) => {
  const cases: Array<[string, Parameters<typeof nextKeyPlan>[0], unknown]> = [
    [
      'not issuing, nothing left',
      {
        certificate: certificateFrom(web, withSpec({ privateKey: ecdsa })),
        owned: [],
        current: undefined,
      },
      { action: 'none' },
    ],
    [
      'not issuing: every next key goes and the name is forgotten',
      {
        certificate: certificateFrom(
          web,
          withSpec({ privateKey: ecdsa }),
          withStatus({ nextPrivateKeySecretName: 'web-abc' }),
        ),
        owned: [next('web-abc', withKey()), next('web-def', withKey())],
        current: undefined,
      },
      { action: 'clean-up', remove: ['web-abc', 'web-def'], clearStatusName: true },
    ],
    [
      'issuing, rotation Always (the default): generate',
      {
        certificate: certificateFrom(renewing, withSpec({ privateKey: { algorithm: 'ECDSA' } })),
        owned: [],
        current: withKey(),
      },
      { action: 'create', key: 'generate', events: [] },
    ],
    [
      'Never, no key in the Secret: generate',
      {
        certificate: certificateFrom(renewing, withSpec({ privateKey: never })),
        owned: [],
        current: { state: 'missing' },
      },
      { action: 'create', key: 'generate', events: [] },
    ],
    [
      'Never, the Secret’s key fits: reuse it',
      {
        certificate: certificateFrom(renewing, withSpec({ privateKey: never })),
        owned: [],
        current: withKey(),
      },
      { action: 'create', key: 'reuse p256', events: [] },
    ],
    [
      'Never, an undecodable key: warn and generate',
      {
        certificate: certificateFrom(renewing, withSpec({ privateKey: never })),
        owned: [],
        current: { state: 'undecodable' },
      },
      {
        action: 'create',
        key: 'generate',
        events: [
          {
            type: 'Warning',
            reason: 'DecodeFailed',
            message: 'Failed to decode private key stored in Secret "web-tls" - generating new key',
          },
        ],
      },
    ],
    [
      'Never, a key that no longer fits the spec: stuck until someone acts',
      {
        certificate: certificateFrom(renewing, withSpec({ privateKey: never })),
        owned: [],
        current: withKey(p384),
      },
      {
        action: 'none',
        events: [
          {
            type: 'Warning',
            reason: 'CannotRegenerateKey',
            message:
              "User intervention required: existing private key in Secret \"web-tls\" does not match requirements on Certificate resource, mismatching fields: [spec.privateKey.size], but cert-manager cannot create new private key as the Certificate's .spec.privateKey.rotationPolicy is unset or set to Never. To allow cert-manager to create a new private key you can set .spec.privateKey.rotationPolicy to 'Always' (this will result in the private key being regenerated every time a cert is renewed) ",
          },
        ],
      },
    ],
    [
      'two next keys: keep the named one',
      {
        certificate: certificateFrom(
          renewing,
          withSpec({ privateKey: ecdsa }),
          withStatus({ nextPrivateKeySecretName: 'web-b' }),
        ),
        owned: [next('web-a', withKey()), next('web-b', withKey())],
        current: undefined,
      },
      { action: 'remove', remove: ['web-a'], events: [] },
    ],
    [
      'one, not yet named: adopt it',
      {
        certificate: certificateFrom(renewing, withSpec({ privateKey: ecdsa })),
        owned: [next('web-a', withKey())],
        current: undefined,
      },
      { action: 'adopt', name: 'web-a' },
    ],
    [
      'one, another is named: delete it',
      {
        certificate: certificateFrom(
          renewing,
          withSpec({ privateKey: ecdsa }),
          withStatus({ nextPrivateKeySecretName: 'web-b' }),
        ),
        owned: [next('web-a', withKey())],
        current: undefined,
      },
      { action: 'remove', remove: ['web-a'], events: [] },
    ],
    [
      'one without a key: delete it',
      {
        certificate: certificateFrom(
          renewing,
          withSpec({ privateKey: ecdsa }),
          withStatus({ nextPrivateKeySecretName: 'web-a' }),
        ),
        owned: [next('web-a', { state: 'missing' })],
        current: undefined,
      },
      { action: 'remove', remove: ['web-a'], events: [] },
    ],
    [
      'one undecodable: delete it',
      {
        certificate: certificateFrom(
          renewing,
          withSpec({ privateKey: ecdsa }),
          withStatus({ nextPrivateKeySecretName: 'web-a' }),
        ),
        owned: [next('web-a', { state: 'undecodable' })],
        current: undefined,
      },
      { action: 'remove', remove: ['web-a'], events: [] },
    ],
    [
      'one that no longer fits the spec: delete it, saying why',
      {
        certificate: certificateFrom(
          renewing,
          withSpec({ privateKey: { algorithm: 'ECDSA', size: 384 } }),
          withStatus({ nextPrivateKeySecretName: 'web-a' }),
        ),
        owned: [next('web-a', withKey())],
        current: undefined,
      },
      {
        action: 'remove',
        remove: ['web-a'],
        events: [
          {
            type: 'Normal',
            reason: 'Deleted',
            message: 'Regenerating private key due to change in fields: [spec.privateKey.size]',
          },
        ],
      },
    ],
    [
      'a rotation policy of another version: nothing (cert-manager only logs it)',
      {
        certificate: certificateFrom(
          renewing,
          withSpec({
            privateKey: {
              algorithm: 'ECDSA',
              rotationPolicy: 'Sometimes' as 'Never',
            },
          }),
        ),
        owned: [],
        current: withKey(),
      },
      { action: 'none' },
    ],
    [
      'one, named and fitting: nothing to do',
      {
        certificate: certificateFrom(
          renewing,
          withSpec({ privateKey: ecdsa }),
          withStatus({ nextPrivateKeySecretName: 'web-a' }),
        ),
        owned: [next('web-a', withKey())],
        current: undefined,
      },
      { action: 'none' },
    ],
  ];
  for (const [name, input, expected] of cases) t.same(summary(nextKeyPlan(input)), expected, name);
});

t.test('the events after storing a next key', async (t) => {
  t.same(keyStoredEvent(false, 'web-x7k2p'), {
    type: 'Normal',
    reason: 'Generated',
    message: 'Stored new private key in temporary Secret resource "web-x7k2p"',
  });
  t.same(keyStoredEvent(true, 'web-x7k2p'), {
    type: 'Normal',
    reason: 'Reused',
    message: 'Reusing private key stored in existing Secret resource "web-x7k2p"',
  });
});
