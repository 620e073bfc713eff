import { X509Certificate } from 'node:crypto';
import t from 'tap';
import {
  caSecretPlan,
  MAX_TRUSTED_CAS,
  stillTrusted,
  trustBundle,
  WEBHOOK_CA_LIFETIME_MS,
} from '../../../src/admission/webhook/webhook-ca-policy.js';
import { createSelfSignedCa } from '../../../src/pki/certificate.js';
import { encodePrivateKey, generatePrivateKey } from '../../../src/pki/keys.js';
import {
  secret,
  secretFrom,
  withData,
  withNamespace,
  withType,
} from '../../support/builders/index.js';
import { servingCertificate } from '../../support/webhook-tls.js';

const DAY = 24 * 3600 * 1000;
const NOW = Date.UTC(2026, 5, 1);

async function ca(issuedDaysAgo: number, lifetimeMs = WEBHOOK_CA_LIFETIME_MS) {
  const key = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
  const certificatePem = await createSelfSignedCa({
    key,
    commonName: `ca-${issuedDaysAgo}`,
    durationMs: lifetimeMs,
    now: new Date(NOW - issuedDaysAgo * DAY),
  });
  return { certificatePem, keyPem: encodePrivateKey(key, 'PKCS8') };
}

const fresh = await ca(10);
const older = await ca(200);
const expired = await ca(400);

/** The webhook's CA Secret. */
const webhookCa = secret(
  'cert-csi-webhook-ca',
  withNamespace('cert-csi'),
  withType('kubernetes.io/tls'),
);

/** Sets the Secret's data to pair, with bundle as its ca.crt. */
function holding(pair: { certificatePem: string; keyPem: string }, bundle = pair.certificatePem) {
  return withData({ 'tls.crt': pair.certificatePem, 'tls.key': pair.keyPem, 'ca.crt': bundle });
}

t.test('a usable CA is used; a missing Secret is created', async (t) => {
  t.same(caSecretPlan(undefined, NOW), { action: 'create' });
  t.same(caSecretPlan(secretFrom(webhookCa, holding(fresh)), NOW), { action: 'use' });
  t.same(
    caSecretPlan(
      secretFrom(webhookCa, holding(fresh, fresh.certificatePem + older.certificatePem)),
      NOW,
    ),
    {
      action: 'use',
    },
  );
});

t.test(
  'a CA is rotated in the last third of its life, keeping the valid CAs trusted',
  async (t) => {
    const nearEnd = await ca(250);
    const plan = caSecretPlan(
      secretFrom(webhookCa, holding(nearEnd, nearEnd.certificatePem + expired.certificatePem)),
      NOW,
    );
    if (plan.action !== 'rotate') throw new Error(`expected a rotation, got ${plan.action}`);
    t.equal(plan.why, 'its CA is in the last third of its life');
    t.same(
      plan.trusted.map((c) => c.subject),
      ['CN=ca-250'],
      'the expired CA of the old bundle is dropped',
    );
    t.same(
      caSecretPlan(secretFrom(webhookCa, holding(nearEnd)), NOW - 100 * DAY),
      { action: 'use' },
      'not before',
    );
  },
);

t.test('an unusable Secret is rotated, saying why', async (t) => {
  const why = (s: ReturnType<typeof secret>) => {
    const plan = caSecretPlan(s, NOW);
    return plan.action === 'rotate' ? plan.why : plan.action;
  };
  t.equal(why(secretFrom(webhookCa, holding(expired))), 'its CA has expired');
  t.match(
    why({ ...secretFrom(webhookCa, holding(fresh)), data: {} }),
    /^its key pair cannot sign: secret has no "tls.crt"/,
  );
  t.match(
    why(
      secretFrom(
        webhookCa,
        holding({ certificatePem: fresh.certificatePem, keyPem: older.keyPem }),
      ),
    ),
    'private key does not match certificate',
  );
  const { issued, serving } = await servingCertificate();
  serving.stop();
  t.equal(
    why(
      secretFrom(
        webhookCa,
        holding({ certificatePem: issued.certificatePem, keyPem: issued.keyPem }, issued.caPem),
      ),
    ),
    'its certificate is not a CA',
  );
  t.equal(
    why(secretFrom(webhookCa, holding(fresh, older.certificatePem))),
    'its ca.crt does not hold the signing CA',
  );
  t.equal(
    why(secretFrom(webhookCa, holding(fresh, 'not a PEM'))),
    'its ca.crt does not hold the signing CA',
  );
  const keyInBundle = caSecretPlan(
    secretFrom(webhookCa, holding(fresh, '-----BEGIN KEY-----\nAAAA\n-----END KEY-----\n')),
    NOW,
  );
  t.match(
    keyInBundle,
    {
      action: 'rotate',
      why: 'its key pair cannot sign: PEM block 1 is "KEY", not a certificate',
      trusted: [],
    },
    'a ca.crt holding something else: nothing in it to keep',
  );
});

t.test(
  'the trust bundle: the new CA first, then older valid ones, newest first, capped',
  async (t) => {
    const cas = await Promise.all([20, 40, 60, 80, 100].map((days) => ca(days)));
    const newest = new X509Certificate((await ca(0)).certificatePem);
    const trusted = cas.map((c) => new X509Certificate(c.certificatePem)).reverse();
    const bundle = trustBundle(newest, [...trusted, trusted[0] as X509Certificate, newest]);
    const subjects = stillTrusted(bundle, NOW).map((c) => c.subject);
    t.equal(subjects.length, MAX_TRUSTED_CAS);
    t.same(subjects, ['CN=ca-0', 'CN=ca-20', 'CN=ca-40', 'CN=ca-60']);
    t.ok(bundle.endsWith('-----END CERTIFICATE-----\n'), 'PEM blocks end with a newline');
    t.same(stillTrusted(undefined, NOW), []);
    t.same(stillTrusted(expired.certificatePem, NOW), [], 'an expired CA is not trusted');
  },
);
