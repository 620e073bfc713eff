import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import t from 'tap';
import {
  type CertificateRequest,
  CertificateRequestKind,
} from '../../src/api/certificate-request.js';
import { IssuerKind } from '../../src/api/issuer.js';
import { SecretKind } from '../../src/api/secret.js';
import { issuer, tlsSecret, withNamespace, withSpec } from '../support/builders/index.js';
import { rejectsWith } from '../support/grpc-assert.js';
import { expireOnceWaiting } from '../support/held-deadlines.js';
import { makeCA } from '../support/issuer-fixtures.js';
import { embeddedCA, startPlugin } from '../support/plugin-harness.js';

t.test('identity and node info', async (t) => {
  const p = await startPlugin(t);
  t.same(await p.client.identityCall('GetPluginInfo'), {
    name: 'csi.cert-manager.io',
    vendor_version: '0.1.0-test',
    manifest: {},
  });
  t.same(
    await p.client.identityCall('GetPluginCapabilities'),
    { capabilities: [] },
    'no controller service',
  );
  t.same(await p.client.identityCall('Probe'), { ready: { value: true } });
  const info = await p.client.nodeCall('NodeGetInfo');
  t.equal(info.node_id, 'test-node');
  const caps = await p.client.nodeCall<{ capabilities: Array<{ rpc: { type: string } }> }>(
    'NodeGetCapabilities',
  );
  t.same(
    caps.capabilities.map((c) => c.rpc.type),
    ['VOLUME_MOUNT_GROUP'],
  );
  for (const method of [
    'NodeStageVolume',
    'NodeUnstageVolume',
    'NodeGetVolumeStats',
    'NodeExpandVolume',
  ]) {
    await rejectsWith(t, p.client.nodeCall(method, {}), status.UNIMPLEMENTED, /not implemented/);
  }
});

t.test(
  'missing ids, paths and capability are InvalidArgument, and nothing is written',
  async (t) => {
    const p = await startPlugin(t);
    await rejectsWith(
      t,
      p.client.nodeCall('NodePublishVolume', { readonly: true, volume_context: embeddedCA() }),
      status.INVALID_ARGUMENT,
      /volume_id: required.*target_path: required.*volume_capability: required/,
    );
    await rejectsWith(
      t,
      p.client.nodeCall('NodeUnpublishVolume', {}),
      status.INVALID_ARGUMENT,
      /volume_id: required; target_path: required/,
    );
    await rejectsWith(
      t,
      p.publish('csi-rw', embeddedCA(), { readonly: false }),
      status.INVALID_ARGUMENT,
      /readOnly must be set to 'true'/,
    );
    await rejectsWith(
      t,
      p.publish('csi-persistent', embeddedCA({ 'csi.storage.k8s.io/ephemeral': 'false' })),
      status.INVALID_ARGUMENT,
      /only ephemeral volume types are supported/,
    );
    t.same(await p.dataRoot.listVolumeIds(), [], 'no volume dir');
    t.same(await p.requests(), [], 'no CertificateRequest');
  },
);

t.test('unsafe volume ids and file names never write outside the volume dir', async (t) => {
  const p = await startPlugin(t);
  const before = await readdir(p.dir);
  for (const volumeId of ['../escape', 'a/b', '/abs', '..', '.']) {
    await rejectsWith(
      t,
      p.publish(volumeId, embeddedCA(), { target: join(p.dir, 'target-x') }),
      status.INVALID_ARGUMENT,
      /volume_id/,
    );
  }
  for (const [key, value] of [
    ['csi.cert-manager.io/certificate-file', '../../escape.crt'],
    ['csi.cert-manager.io/privatekey-file', '/etc/evil.key'],
    ['csi.cert-manager.io/ca-file', '..'],
    ['csi.cert-manager.io/pkcs12-filename', 'x/y.p12'],
  ] as const) {
    const attributes = embeddedCA({ [key]: value });
    if (key.endsWith('pkcs12-filename')) {
      attributes['csi.cert-manager.io/pkcs12-enable'] = 'true';
      attributes['csi.cert-manager.io/pkcs12-password'] = 'pw';
    }
    await rejectsWith(
      t,
      p.publish('csi-files', attributes),
      status.INVALID_ARGUMENT,
      new RegExp(key.replace('.', '\\.')),
    );
  }
  t.same(await readdir(p.dir), before, 'nothing new next to the data root');
  t.same(await p.dataRoot.listVolumeIds(), []);
});

t.test('republish is idempotent; a failing republish leaves a working volume alone', async (t) => {
  const p = await startPlugin(t);
  const { target } = await p.publish('csi-again', embeddedCA());
  const first = await readFile(join(target, 'tls.crt'), 'utf8');
  await p.publish('csi-again', embeddedCA());
  t.equal(await readFile(join(target, 'tls.crt'), 'utf8'), first, 'same certificate');
  t.equal((await p.requests()).length, 1, 'no second request');
  await rejectsWith(
    t,
    p.publish('csi-again', embeddedCA({ 'csi.cert-manager.io/duration': '1d' })),
    status.INVALID_ARGUMENT,
    /csi\.cert-manager\.io\/duration/,
  );
  t.equal(
    await readFile(join(target, 'tls.crt'), 'utf8'),
    first,
    'still there after a failed republish',
  );
  await stat(p.dataRoot.metadataPath('csi-again'));
});

t.test(
  'a republish with other attributes is refused with AlreadyExists naming the keys; a new token is fine',
  async (t) => {
    const p = await startPlugin(t);
    const attributes = embeddedCA({
      'csi.cert-manager.io/common-name': 'first.sandbox',
      'csi.cert-manager.io/pkcs12-enable': 'true',
      'csi.cert-manager.io/pkcs12-password': 'first-keystore-secret',
    });
    const tokens = (token: string) => ({
      'csi.storage.k8s.io/serviceAccount.tokens': JSON.stringify({ '': { token } }),
    });
    const { target } = await p.publish('csi-fixed', { ...attributes, ...tokens('token-one') });
    const first = await readFile(join(target, 'tls.crt'), 'utf8');
    await rejectsWith(
      t,
      p.publish('csi-fixed', {
        ...attributes,
        'csi.cert-manager.io/common-name': 'second.sandbox',
        'csi.cert-manager.io/duration': '48h',
      }),
      status.ALREADY_EXISTS,
      /^volume csi-fixed is already published with other settings .*csi\.cert-manager\.io\/common-name: published "first\.sandbox", asked for "second\.sandbox"; csi\.cert-manager\.io\/duration: published \(unset\), asked for "48h"$/,
    );
    const secret = await p
      .publish('csi-fixed', {
        ...attributes,
        'csi.cert-manager.io/pkcs12-password': 'second-keystore-secret',
      })
      .then(
        () => undefined,
        (e: unknown) => e as { code?: number; details?: string },
      );
    t.equal(secret?.code, status.ALREADY_EXISTS, 'a new keystore password is refused');
    t.match(secret?.details, /csi\.cert-manager\.io\/pkcs12-password: differs/);
    t.notMatch(secret?.details, /keystore-secret/, 'neither password is shown');
    await rejectsWith(
      t,
      p.publish('csi-fixed', attributes, { pod: { 'csi.storage.k8s.io/pod.name': 'app-1' } }),
      status.ALREADY_EXISTS,
      /csi\.storage\.k8s\.io\/pod\.name: published "app-0", asked for "app-1"/,
    );
    t.equal(await readFile(join(target, 'tls.crt'), 'utf8'), first, 'the certificate is unchanged');
    await p.publish('csi-fixed', { ...attributes, ...tokens('token-two') });
    t.pass('a republish that only brings new service-account tokens is accepted');
    t.equal(await readFile(join(target, 'tls.crt'), 'utf8'), first, 'and keeps the certificate');
    t.equal((await p.requests()).length, 1, 'one CertificateRequest in all');
  },
);

t.test(
  'a publish of a published volume to another target is refused; its recorded target stays',
  async (t) => {
    const p = await startPlugin(t);
    const { target } = await p.publish('csi-here', embeddedCA());
    const elsewhere = join(p.dir, 'pods', 'other-pod', 'mount');
    await rejectsWith(
      t,
      p.publish('csi-here', embeddedCA(), { target: elsewhere }),
      status.ALREADY_EXISTS,
      new RegExp(
        `target_path: published at "${target}", asked for "${elsewhere}"`.replace(/[./]/g, '\\$&'),
      ),
    );
    const metadata = JSON.parse(await readFile(p.dataRoot.metadataPath('csi-here'), 'utf8'));
    t.equal(metadata.targetPath, target, 'metadata.json keeps the published target');
    await t.rejects(stat(elsewhere), { code: 'ENOENT' }, 'nothing was created at the other target');
    await stat(join(target, 'tls.crt'));
  },
);

t.test(
  'while a first publish is in flight, a publish with other settings is refused, not joined',
  async (t) => {
    // A bounded wait, so a publish wrongly joined ends too.
    const p = await startPlugin(t, {
      publishTimeoutMs: 20_000,
      controllers: { select: ['*', '-certificaterequests-approver'] },
    });
    const first = p.publish('csi-inflight', embeddedCA()).then(
      () => undefined,
      (e: unknown) => e as { code?: number; details?: string },
    );
    await firstRequest(p);
    await rejectsWith(
      t,
      p.publish('csi-inflight', embeddedCA({ 'csi.cert-manager.io/common-name': 'other' })),
      status.ALREADY_EXISTS,
      /csi\.cert-manager\.io\/common-name: published \(unset\), asked for "other"/,
    );
    await rejectsWith(
      t,
      p.publish('csi-inflight', embeddedCA(), { target: join(p.dir, 'elsewhere') }),
      status.ALREADY_EXISTS,
      /target_path: published at/,
    );
    await p.unpublish('csi-inflight', join(p.dir, 'pods', 'csi-inflight', 'mount'));
    t.equal((await first)?.code, status.ABORTED, 'the first publish ends with the unpublish');
  },
);

t.test(
  'a volume that never got a certificate may be published to a new target, which is recorded',
  async (t) => {
    const p = await startPlugin(t, {
      heldDeadlines: true,
      controllers: { select: ['*', '-certificaterequests-approver'] },
    });
    const first = p.publish('csi-moved', embeddedCA());
    first.catch(() => {});
    await expireOnceWaiting(p, 'csi-moved');
    await rejectsWith(t, first, status.DEADLINE_EXCEEDED, /not yet been approved/);
    const moved = join(p.dir, 'pods', 'moved', 'mount');
    const again = p.publish('csi-moved', embeddedCA(), { target: moved });
    again.catch(() => {});
    await expireOnceWaiting(p, 'csi-moved');
    await rejectsWith(t, again, status.DEADLINE_EXCEEDED, /not yet been approved/);
    const metadata = JSON.parse(await readFile(p.dataRoot.metadataPath('csi-moved'), 'utf8'));
    t.equal(metadata.targetPath, moved, 'the new target is the recorded one');
  },
);

t.test('20 concurrent publishes of one volume share one issuance', async (t) => {
  const p = await startPlugin(t);
  const results = await Promise.allSettled(
    Array.from({ length: 20 }, () =>
      p.publish('csi-storm', embeddedCA({ 'csi.cert-manager.io/key-algorithm': 'ECDSA' })),
    ),
  );
  t.same(
    results.map((r) => r.status),
    Array(20).fill('fulfilled'),
  );
  t.equal((await p.requests()).length, 1, 'exactly one CertificateRequest');
});

t.test('unpublish removes everything and succeeds when already gone', async (t) => {
  const p = await startPlugin(t);
  const { target } = await p.publish('csi-bye', embeddedCA());
  await p.unpublish('csi-bye', target);
  await t.rejects(stat(p.dataRoot.volumeDir('csi-bye')), { code: 'ENOENT' }, 'volume dir removed');
  await t.rejects(stat(join(target, 'tls.crt')), { code: 'ENOENT' }, 'files gone from the target');
  t.same(await p.requests(), [], 'its CertificateRequest is deleted');
  await p.unpublish('csi-bye', target);
  await p.unpublish('csi-never-published', join(p.dir, 'no', 'such', 'target'));
  t.pass('unpublishing a missing volume or target succeeds');
});

t.test(
  'a publish that cannot finish says what it waits for, and the retry resumes the same request',
  async (t) => {
    const p = await startPlugin(t, { heldDeadlines: true });
    // The Issuer exists (a missing one is refused at publish: none can come in embedded mode)
    // but its CA Secret does not yet: not ready, so the request waits.
    await p.store.create(
      IssuerKind,
      issuer('team-ca', withNamespace('sandbox'), withSpec({ ca: { secretName: 'team-ca' } })),
    );
    const attributes = {
      'csi.cert-manager.io/issuer-name': 'team-ca',
      'csi.cert-manager.io/key-algorithm': 'ECDSA',
    };
    const waiting = p.publish('csi-wait', attributes);
    waiting.catch(() => {});
    // Expired once the node has seen the signer's verdict: the publish reports it.
    await expireOnceWaiting(p, 'csi-wait', (request) =>
      (request.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.reason === 'Pending'),
    );
    await rejectsWith(
      t,
      waiting,
      status.DEADLINE_EXCEEDED,
      /^waiting for request: request "[0-9a-f-]+" is pending: Referenced issuer does not have a Ready status condition$/,
    );
    const [pending] = await p.requests();
    t.ok(pending, 'the request stays');
    const metadata = JSON.parse(await readFile(p.dataRoot.metadataPath('csi-wait'), 'utf8'));
    t.equal(metadata.pendingRequest?.name, pending?.metadata.name, 'persisted for the retry');
    t.match(metadata.lastError?.message, /waiting for request/);
    const keyStat = await stat(p.dataRoot.pendingKeyPath('csi-wait'));
    t.equal(keyStat.mode & 0o777, 0o600, 'pending key is 0600');

    const ca = await makeCA();
    await p.store.create(
      SecretKind,
      tlsSecret('sandbox', 'team-ca', { 'tls.crt': ca.certificatePem, 'tls.key': ca.keyPem }),
    );
    await p.publish('csi-wait', attributes);
    const requests = await p.requests();
    t.equal(requests.length, 1, 'no second request');
    t.equal(requests[0]?.metadata.name, pending?.metadata.name, 'the same request was resumed');
    await t.rejects(
      stat(p.dataRoot.pendingKeyPath('csi-wait')),
      { code: 'ENOENT' },
      'pending key removed once issued',
    );
  },
);

t.test('a request that is never approved times out saying so', async (t) => {
  const p = await startPlugin(t, {
    heldDeadlines: true,
    controllers: { select: ['*', '-certificaterequests-approver'] },
  });
  const unapproved = p.publish('csi-unapproved', embeddedCA());
  unapproved.catch(() => {});
  await expireOnceWaiting(p, 'csi-unapproved');
  await rejectsWith(
    t,
    unapproved,
    status.DEADLINE_EXCEEDED,
    /has not yet been approved by approval plugin/,
  );
});

t.test('a denied request fails with PermissionDenied and leaves no volume dir', async (t) => {
  const p = await startPlugin(t, {
    controllers: {
      config: {
        approval: () => ({ decision: 'deny', reason: 'policy', message: 'dns name not allowed' }),
      },
    },
  });
  await rejectsWith(
    t,
    p.publish('csi-denied', embeddedCA()),
    status.PERMISSION_DENIED,
    /has been denied by the approval plugin: dns name not allowed/,
  );
  await t.rejects(stat(p.dataRoot.volumeDir('csi-denied')), { code: 'ENOENT' });
});

t.test(
  'an issuance that finishes after unpublish writes nothing and recreates nothing',
  async (t) => {
    const p = await startPlugin(t, {
      controllers: { select: ['*', '-certificaterequests-approver'] },
    });
    // Settled at once so the rejection is never unhandled while unpublish runs.
    const publishing = p.publish('csi-late', embeddedCA()).then(
      () => undefined,
      (err: unknown) => err as { code?: number; details?: string },
    );
    const request = await firstRequest(p);
    const target = join(p.dir, 'pods', 'csi-late', 'mount');
    await p.unpublish('csi-late', target);
    const err = await publishing;
    t.equal(err?.code, status.ABORTED, 'the publish was aborted');
    t.match(err?.details, /waiting for request/);
    t.ok(request, 'a request had been created');
    await t.rejects(
      stat(p.dataRoot.volumeDir('csi-late')),
      { code: 'ENOENT' },
      'volume dir stays gone',
    );
    t.same(await p.requests(), [], 'request deleted with the volume');
  },
);

t.test('SelfSigned works in embedded mode with the key held by the node', async (t) => {
  const p = await startPlugin(t);
  const { target } = await p.publish('csi-self', {
    'csi.cert-manager.io/issuer-name': 'self-signed',
    'csi.cert-manager.io/issuer-kind': 'ClusterIssuer',
    'csi.cert-manager.io/common-name': 'self.sandbox',
  });
  t.equal(
    await readFile(join(target, 'ca.crt'), 'utf8'),
    await readFile(join(target, 'tls.crt'), 'utf8'),
  );
});

/** Resolves with the first CertificateRequest created, learnt from a watch. */
function firstRequest(p: Awaited<ReturnType<typeof startPlugin>>): Promise<CertificateRequest> {
  return new Promise((resolve, reject) => {
    const watch = p.store.watch<CertificateRequest>(
      CertificateRequestKind,
      { resourceVersion: '1' },
      {
        onEvent: (event) => {
          if (event.type !== 'ADDED') return;
          watch.stop();
          resolve(event.object);
        },
        onError: reject,
      },
    );
  });
}
