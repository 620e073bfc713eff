import t from 'tap';
import {
  type ApiDiscovery,
  type DiscoveredResource,
  NEGATIVE_CACHE_MS,
  SignerResourceResolver,
} from '../../../src/admission/webhook/signer-resources.js';
import { ManualClock } from '../../../src/base/clock.js';
import { rejectionMessage } from '../../support/eventually.js';

/** A discovery over a fixed set of groups, counting what it is asked. */
function discovery(groups: Record<string, Record<string, DiscoveredResource[]>>) {
  const asked: string[] = [];
  let failing: Error | undefined;
  const api: ApiDiscovery = {
    async groupVersions(group) {
      asked.push(`groups ${group}`);
      if (failing) throw failing;
      const versions = groups[group];
      return versions ? Object.keys(versions) : undefined;
    },
    async resources(group, version) {
      asked.push(`resources ${group}/${version}`);
      return groups[group]?.[version] ?? [];
    },
  };
  return {
    api,
    asked,
    fail(err: Error | undefined) {
      failing = err;
    },
  };
}

const certManager = {
  'cert-manager.io': {
    v1: [
      { name: 'issuers/status', kind: 'Issuer', namespaced: true },
      { name: 'issuers', kind: 'Issuer', namespaced: true },
      { name: 'clusterissuers', kind: 'ClusterIssuer', namespaced: false },
    ],
  },
  'example.com': {
    v1beta1: [{ name: 'other', kind: 'Other', namespaced: true }],
    v1: [{ name: 'vaultissuers', kind: 'VaultIssuer', namespaced: false }],
  },
};

t.test('a kind resolves to its plural and scope, and is remembered for good', async (t) => {
  const { api, asked } = discovery(certManager);
  const resolver = new SignerResourceResolver(api, new ManualClock());
  t.same(
    await resolver.resolve('cert-manager.io', 'Issuer'),
    {
      signerResource: 'issuers.cert-manager.io',
      namespaced: true,
    },
    'the resource, not its status subresource listed first',
  );
  t.same(await resolver.resolve('cert-manager.io', 'ClusterIssuer'), {
    signerResource: 'clusterissuers.cert-manager.io',
    namespaced: false,
  });
  t.same(
    await resolver.resolve('example.com', 'VaultIssuer'),
    {
      signerResource: 'vaultissuers.example.com',
      namespaced: false,
    },
    'found in a later version of the group',
  );
  const count = asked.length;
  await resolver.resolve('cert-manager.io', 'Issuer');
  await resolver.resolve('example.com', 'VaultIssuer');
  t.equal(asked.length, count, 'no discovery request for a known kind');
});

t.test('a missing kind of a served group is remembered for 30 s only', async (t) => {
  const { api, asked } = discovery(certManager);
  const clock = new ManualClock();
  const resolver = new SignerResourceResolver(api, clock);
  t.equal(await resolver.resolve('cert-manager.io', 'Missing'), undefined);
  const count = asked.length;
  clock.advance(NEGATIVE_CACHE_MS - 1);
  t.equal(await resolver.resolve('cert-manager.io', 'Missing'), undefined);
  t.equal(asked.length, count, 'answered from the cache');
  clock.advance(1);
  t.equal(await resolver.resolve('cert-manager.io', 'Missing'), undefined);
  t.ok(asked.length > count, 'asked again after 30 s');
});

t.test('a group the server does not serve is asked about every time', async (t) => {
  const { api, asked } = discovery(certManager);
  const resolver = new SignerResourceResolver(api, new ManualClock());
  t.equal(await resolver.resolve('nowhere.io', 'Issuer'), undefined);
  t.equal(await resolver.resolve('nowhere.io', 'Issuer'), undefined);
  t.same(asked, ['groups nowhere.io', 'groups nowhere.io']);
});

t.test('a failed discovery rejects and is not remembered', async (t) => {
  const { api, fail } = discovery(certManager);
  const resolver = new SignerResourceResolver(api, new ManualClock());
  fail(new Error('list API groups: HTTP 503'));
  t.equal(
    await rejectionMessage(resolver.resolve('cert-manager.io', 'Issuer')),
    'list API groups: HTTP 503',
  );
  fail(undefined);
  t.same(await resolver.resolve('cert-manager.io', 'Issuer'), {
    signerResource: 'issuers.cert-manager.io',
    namespaced: true,
  });
});
