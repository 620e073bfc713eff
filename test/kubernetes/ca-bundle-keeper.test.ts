import t, { type Test } from 'tap';
import { CaBundleKeeper } from '../../src/admission/webhook/ca-bundle-keeper.js';
import {
  caBundleOf,
  type WebhookConfigurationObject,
} from '../../src/admission/webhook/ca-bundle-policy.js';
import type { ResourceKind } from '../../src/api/meta.js';
import {
  MutatingWebhookConfigurationKind as MUTATING,
  ValidatingWebhookConfigurationKind as VALIDATING,
} from '../../src/api/webhook-configuration.js';
import { ManualClock } from '../../src/base/clock.js';
import { KubeConfig } from '../../src/store/kubernetes/client-node.js';
import { KubernetesStore } from '../../src/store/kubernetes/kubernetes-store.js';
import { FakeApiServer } from '../fake-api-server/fake-api-server.js';
import { rejection, until } from '../support/eventually.js';
import { makeCA } from '../support/issuer-fixtures.js';
import { recordingLogger } from '../support/recording-logger.js';

const NAME = 'cert-csi-webhook';

const [caA, caB] = await Promise.all([makeCA(), makeCA()]);

function configuration(
  kind: ResourceKind,
  webhooks: string[],
  caBundle?: string,
): WebhookConfigurationObject {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: kind.kind,
    metadata: { name: NAME },
    webhooks: webhooks.map((name) => ({
      name,
      admissionReviewVersions: ['v1'],
      sideEffects: 'None',
      clientConfig: {
        service: { namespace: 'cert-csi', name: 'cert-csi-webhook', path: '/validate' },
        ...(caBundle ? { caBundle } : {}),
      },
    })),
  };
}

async function cluster(t: Test, options: { create?: boolean } = {}) {
  const server = await FakeApiServer.start();
  t.teardown(() => server.close());
  if (options.create !== false) {
    await server.store.create(
      VALIDATING,
      configuration(VALIDATING, ['a.cert-csi.io', 'b.cert-csi.io']),
    );
    await server.store.create(MUTATING, configuration(MUTATING, ['c.cert-csi.io']));
  }
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions(server.kubeConfig());
  let bundle = caA.certificatePem;
  const logger = recordingLogger();
  const keeper = (bundlePem: () => string | undefined = () => bundle) => {
    const k = new CaBundleKeeper({
      store: new KubernetesStore({ kubeConfig, qps: 1000, burst: 1000 }),
      configurations: [
        { kind: VALIDATING, name: NAME },
        { kind: MUTATING, name: NAME },
      ],
      bundlePem,
      logger,
      retryMs: 20,
    });
    t.teardown(() => k.stop());
    return k;
  };
  return {
    server,
    logger,
    keeper,
    setBundle(pem: string) {
      bundle = pem;
    },
    async bundles(): Promise<Array<string | undefined>> {
      const objects = await Promise.all(
        [VALIDATING, MUTATING].map((kind) =>
          server.store.get<WebhookConfigurationObject>(kind, NAME),
        ),
      );
      return objects.flatMap((o) => (o.webhooks ?? []).map((w) => w.clientConfig.caBundle));
    },
    updates: () => server.requests.filter((r) => r.verb === 'update' && r.status === 200).length,
  };
}

const everyWebhook = (bundles: Array<string | undefined>, pem: string) =>
  bundles.length === 3 && bundles.every((b) => b === caBundleOf(pem));

t.test('every webhook of both configurations gets the bundle, once, and is trusted', async (t) => {
  const c = await cluster(t);
  const keeper = c.keeper();
  t.notOk(keeper.trusts(caA.certificatePem), 'nothing trusted before');
  const trusted = keeper.waitUntilTrusted(caA.certificatePem, new AbortController().signal);
  keeper.start();
  await trusted;
  t.ok(everyWebhook(await c.bundles(), caA.certificatePem), 'the base64 PEM in every caBundle');
  t.ok(keeper.trusts(caA.certificatePem));
  t.notOk(keeper.trusts(caB.certificatePem), 'another CA is not');
  t.equal(c.updates(), 2, 'one update per configuration');
  const put = c.server.requests.find((r) => r.verb === 'update');
  t.ok(put?.path.endsWith(`/${NAME}`));
  const stored = await c.server.store.get<WebhookConfigurationObject>(VALIDATING, NAME);
  t.same(
    stored.webhooks?.[0]?.clientConfig?.service,
    {
      namespace: 'cert-csi',
      name: 'cert-csi-webhook',
      path: '/validate',
      port: 443,
    },
    'nothing else changed (the API server defaults the port)',
  );
});

t.test('an overwritten caBundle is put back; a new bundle replaces it', async (t) => {
  const c = await cluster(t);
  const keeper = c.keeper();
  keeper.start();
  await keeper.waitUntilTrusted(caA.certificatePem, new AbortController().signal);
  await c.server.store.update(
    VALIDATING,
    configuration(VALIDATING, ['a.cert-csi.io', 'b.cert-csi.io'], 'Zm9v'),
  );
  await until(async () => everyWebhook(await c.bundles(), caA.certificatePem), {
    what: 'the restore',
  });
  c.setBundle(caB.certificatePem + caA.certificatePem);
  keeper.bundleChanged();
  await until(
    async () => everyWebhook(await c.bundles(), caB.certificatePem + caA.certificatePem),
    {
      what: 'the new bundle',
    },
  );
  // What the keeper's watch has seen (it may lag the store by a moment).
  const signal = new AbortController().signal;
  await keeper.waitUntilTrusted(caB.certificatePem, signal);
  t.ok(keeper.trusts(caA.certificatePem), 'both CAs trusted');
});

t.test('a conflict is read again; a failed write is retried; two keepers write once', async (t) => {
  const c = await cluster(t);
  c.server.failRequests({
    status: 409,
    times: 1,
    match: (r) => r.verb === 'update' && r.resource === 'validatingwebhookconfigurations',
  });
  c.server.failRequests({
    status: 500,
    times: 2,
    match: (r) => r.verb === 'update' && r.resource === 'mutatingwebhookconfigurations',
  });
  const [one, two] = [c.keeper(), c.keeper()];
  one.start();
  two.start();
  await until(async () => everyWebhook(await c.bundles(), caA.certificatePem), {
    what: 'both written',
  });
  t.equal(c.updates(), 2, 'one successful write per configuration');
  t.ok(
    c.logger.records.some(
      ([level, obj, msg]) =>
        level === 'warn' &&
        msg === 'cannot set the caBundle of a webhook configuration' &&
        (obj as { retryMs: number }).retryMs === 20,
    ),
    'the failure is logged with its retry delay',
  );
});

t.test('a configuration applied later gets the bundle when it appears', async (t) => {
  const c = await cluster(t, { create: false });
  const keeper = c.keeper();
  keeper.bundleChanged();
  await until(
    () => c.logger.records.some(([, , msg]) => msg === 'webhook configuration not found'),
    { what: 'the warning' },
  );
  keeper.start();
  await c.server.store.create(
    VALIDATING,
    configuration(VALIDATING, ['a.cert-csi.io', 'b.cert-csi.io']),
  );
  await c.server.store.create(MUTATING, configuration(MUTATING, ['c.cert-csi.io']));
  await until(async () => everyWebhook(await c.bundles(), caA.certificatePem), {
    what: 'the bundle',
  });
});

t.test('without a bundle nothing is written; a wait ends with its signal', async (t) => {
  const c = await cluster(t);
  const keeper = c.keeper(() => undefined);
  keeper.start();
  keeper.bundleChanged();
  const stop = new AbortController();
  const waiting = keeper.waitUntilTrusted(caA.certificatePem, stop.signal);
  stop.abort(new Error('stopping'));
  t.match(String(await rejection(waiting)), 'stopping');
  t.equal(c.updates(), 0);
  const aborted = new AbortController();
  aborted.abort(new Error('already'));
  t.match(
    String(await rejection(keeper.waitUntilTrusted(caA.certificatePem, aborted.signal))),
    'already',
  );
  t.notOk(keeper.trusts('not a certificate'), 'garbage is not trusted');
});

t.test('a write that keeps failing is retried with backoff, one timer at a time', async (t) => {
  const server = await FakeApiServer.start();
  t.teardown(() => server.close());
  await server.store.create(VALIDATING, configuration(VALIDATING, ['a.cert-csi.io']));
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions(server.kubeConfig());
  const clock = new ManualClock(Date.now());
  const logger = recordingLogger();
  const keeper = new CaBundleKeeper({
    store: new KubernetesStore({ kubeConfig, qps: 1000, burst: 1000 }),
    configurations: [{ kind: VALIDATING, name: NAME }],
    bundlePem: () => caA.certificatePem,
    logger,
    clock,
  });
  t.teardown(() => keeper.stop());
  server.failRequests({ status: 500, times: 3, match: (r) => r.verb === 'update' });
  const failures = () =>
    logger.records.filter(([, , m]) => m === 'cannot set the caBundle of a webhook configuration');
  keeper.bundleChanged();
  await until(() => failures().length === 1, { what: 'the first failure' });
  t.match(failures()[0]?.[1], { retryMs: 1_000 }, 'default first delay 1 s');
  keeper.bundleChanged();
  await until(() => failures().length === 2, { what: 'a second failure before the retry' });
  t.match(failures()[1]?.[1], { retryMs: 2_000 }, 'doubled');
  const retries = clock.pendingTimers();
  clock.advance(2_000);
  await until(() => failures().length === 3, { what: 'the retry failing' });
  t.match(failures()[2]?.[1], { retryMs: 4_000 });
  t.equal(clock.pendingTimers(), retries, 'the earlier retry timer was replaced, not added to');
  clock.advance(4_000);
  await until(
    async () => {
      const stored = await server.store.get<WebhookConfigurationObject>(VALIDATING, NAME);
      return stored.webhooks?.[0]?.clientConfig.caBundle === caBundleOf(caA.certificatePem);
    },
    { what: 'the bundle written' },
  );
});
