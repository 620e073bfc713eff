import t from 'tap';
import {
  type CaIssuer,
  type CaSecretState,
  type CaVerdict,
  caVerdict,
  describeIssuers,
  lostCaMessage,
  type SignedObject,
} from '../../src/issuer/ca-loss.js';

// Which CA Secret may be made anew quietly (a first start) and which is a
// lost CA that pods still trust. The plugin tests (test/cli/*-ca-loss.test.ts) run it for real.

const bootstrap: CaIssuer = { kind: 'ClusterIssuer', name: 'cert-csi-ca' };
const team: CaIssuer = { kind: 'Issuer', name: 'team-ca', namespace: 'team' };

const VOL = `csi-${'1a'.repeat(32)}`;
const VOL2 = `csi-${'2b'.repeat(32)}`;

function volume(
  id: string,
  issuerRef: SignedObject['issuerRef'],
  namespace = 'apps',
): SignedObject {
  return { kind: 'volume', id, issuerRef, namespace };
}

function secret(id: string, issuerRef: SignedObject['issuerRef']): SignedObject {
  const [namespace = ''] = id.split('/');
  return { kind: 'secret', id, issuerRef, namespace };
}

const missing: CaSecretState = { state: 'missing' };
const unusable: CaSecretState = {
  state: 'unusable',
  reason: 'private key does not match certificate',
};
const usable: CaSecretState = { state: 'usable' };

const lost = (problem: string, volumes: string[] = [], secrets: string[] = []): CaVerdict => ({
  verdict: 'lost',
  problem,
  volumes,
  secrets,
});

const cases: Array<{
  name: string;
  issuers: CaIssuer[];
  secret: CaSecretState;
  signed: SignedObject[];
  want: CaVerdict;
}> = [
  {
    name: 'a usable Secret is kept, whatever it signed',
    issuers: [bootstrap],
    secret: usable,
    signed: [volume(VOL, { name: 'cert-csi-ca', kind: 'ClusterIssuer' })],
    want: { verdict: 'usable' },
  },
  {
    name: 'missing with nothing signed: a first start',
    issuers: [bootstrap],
    secret: missing,
    signed: [],
    want: { verdict: 'firstStart' },
  },
  {
    name: 'missing while a volume names the ClusterIssuer: lost',
    issuers: [bootstrap],
    secret: missing,
    signed: [volume(VOL, { name: 'cert-csi-ca', kind: 'ClusterIssuer', group: 'cert-manager.io' })],
    want: lost(
      `it is missing, but 1 volume(s) on the data root hold certificates it signed (e.g. ${VOL})`,
      [VOL],
    ),
  },
  {
    name: 'an empty group is cert-manager.io',
    issuers: [bootstrap],
    secret: missing,
    signed: [volume(VOL, { name: 'cert-csi-ca', kind: 'ClusterIssuer', group: '' })],
    want: lost(
      `it is missing, but 1 volume(s) on the data root hold certificates it signed (e.g. ${VOL})`,
      [VOL],
    ),
  },
  {
    name: 'missing while only a Certificate Secret names it: lost',
    issuers: [bootstrap],
    secret: missing,
    signed: [secret('apps/app-tls', { name: 'cert-csi-ca', kind: 'ClusterIssuer' })],
    want: lost(
      'it is missing, but 1 Certificate Secret(s) in the store hold certificates it signed (e.g. apps/app-tls)',
      [],
      ['apps/app-tls'],
    ),
  },
  {
    name: 'volumes and Secrets are counted apart, one example of each',
    issuers: [bootstrap],
    secret: missing,
    signed: [
      volume(VOL, { name: 'cert-csi-ca', kind: 'ClusterIssuer' }),
      volume(VOL2, { name: 'cert-csi-ca', kind: 'ClusterIssuer' }, 'other'),
      secret('apps/app-tls', { name: 'cert-csi-ca', kind: 'ClusterIssuer' }),
    ],
    want: lost(
      `it is missing, but 2 volume(s) on the data root and 1 Certificate Secret(s) in the store hold certificates it signed (e.g. ${VOL}, apps/app-tls)`,
      [VOL, VOL2],
      ['apps/app-tls'],
    ),
  },
  {
    name: 'what another issuer signed does not count',
    issuers: [bootstrap],
    secret: missing,
    signed: [
      volume(VOL, { name: 'embedded-ca', kind: 'ClusterIssuer' }),
      // An Issuer of the same name is another object.
      volume(VOL2, { name: 'cert-csi-ca', kind: 'Issuer' }),
      // Another API group's issuer of the same kind and name is not ours.
      secret('apps/app-tls', { name: 'cert-csi-ca', kind: 'ClusterIssuer', group: 'example.com' }),
    ],
    want: { verdict: 'firstStart' },
  },
  {
    name: "an Issuer counts only what its own namespace's pods and Secrets name (kind defaults to Issuer)",
    issuers: [team],
    secret: missing,
    signed: [
      volume(VOL, { name: 'team-ca' }, 'elsewhere'),
      secret('elsewhere/web-tls', { name: 'team-ca', kind: 'Issuer' }),
      volume(VOL2, { name: 'team-ca', kind: '' }, 'team'),
    ],
    want: lost(
      `it is missing, but 1 volume(s) on the data root hold certificates it signed (e.g. ${VOL2})`,
      [VOL2],
    ),
  },
  {
    name: 'two issuers sharing one Secret: what either signed counts',
    issuers: [bootstrap, { kind: 'ClusterIssuer', name: 'second' }],
    secret: missing,
    signed: [secret('apps/app-tls', { name: 'second', kind: 'ClusterIssuer' })],
    want: lost(
      'it is missing, but 1 Certificate Secret(s) in the store hold certificates it signed (e.g. apps/app-tls)',
      [],
      ['apps/app-tls'],
    ),
  },
  {
    name: 'unusable with nothing signed: lost all the same (never overwritten quietly)',
    issuers: [bootstrap],
    secret: unusable,
    signed: [],
    want: lost('private key does not match certificate'),
  },
  {
    name: 'unusable with what it signed: the reason, then what depends on it',
    issuers: [team],
    secret: unusable,
    signed: [secret('team/web-tls', { name: 'team-ca' })],
    want: lost(
      'private key does not match certificate; 1 Certificate Secret(s) in the store hold certificates it signed (e.g. team/web-tls)',
      [],
      ['team/web-tls'],
    ),
  },
];

for (const c of cases) {
  t.test(c.name, async (t) => {
    t.same(caVerdict(c.issuers, c.secret, c.signed), c.want);
  });
}

t.test('the refusal names the issuers, the Secret, its file and the way on', async (t) => {
  const base = {
    issuers: [bootstrap],
    secret: { namespace: 'cert-csi', name: 'cert-csi-ca' },
    problem: 'it is missing, but 1 volume(s) on the data root hold certificates it signed',
    secretFile: 'core/secrets/cert-csi/cert-csi-ca.json',
  };
  t.equal(
    lostCaMessage({
      ...base,
      maker: { by: 'certificate', certificate: { namespace: 'cert-csi', name: 'root' } },
    }),
    'ClusterIssuer "cert-csi-ca": the CA Secret cert-csi/cert-csi-ca cannot be used: it is missing, but 1 volume(s) on the data root hold certificates it signed. ' +
      'Refusing to start with a new CA that existing pods do not trust. ' +
      'Restore the state dir from a backup (the Secret is core/secrets/cert-csi/cert-csi-ca.json in it), ' +
      'or start once with --accept-new-ca to let Certificate cert-csi/root issue a new CA into it ' +
      '(volumes get its certificates and ca.crt as they renew)',
  );
  t.match(
    lostCaMessage({ ...base, maker: { by: 'nobody' } }),
    '--accept-new-ca to accept a new CA once you load one into it (e.g. with --manifests)',
  );
  const embedded = lostCaMessage({
    ...base,
    issuers: [{ kind: 'ClusterIssuer', name: 'embedded-ca' }],
    secret: { namespace: 'kube-system', name: 'embedded-ca' },
    maker: { by: 'plugin' },
    secretFile: undefined,
  });
  t.match(embedded, 'the embedded CA Secret kube-system/embedded-ca cannot be used');
  t.match(
    embedded,
    'Restore the state dir from a backup, or start once with --accept-new-ca to replace the CA',
  );
});

t.test('issuers are named by kind, an Issuer with its namespace', async (t) => {
  t.equal(describeIssuers([bootstrap, team]), 'ClusterIssuer "cert-csi-ca", Issuer "team/team-ca"');
});
