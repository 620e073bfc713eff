// A republish must repeat the volume capability of the publish (CSI, NodePublishVolume:
// ALREADY_EXISTS for a volume published "but is incompatible with the specified
// volume_capability"), through the real socket: refused naming the field, nothing changed,
// the published volume still served.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import t from 'tap';
import { until } from '../support/eventually.js';
import { rejectsWith } from '../support/grpc-assert.js';
import { embeddedCA, type PluginHarness, startPlugin } from '../support/plugin-harness.js';
import { inlineVolumeCall, podInfo } from '../support/publish-call.js';

interface Capability {
  mount: { fs_type: string; mount_flags: string[]; volume_mount_group: string };
  access_mode: { mode: string };
}

/** kubelet's capability for an inline volume, with changes. */
function capability(
  change: { mode?: string; fsType?: string; mountFlags?: string[] } = {},
): Capability {
  return {
    mount: {
      fs_type: change.fsType ?? '',
      mount_flags: change.mountFlags ?? [],
      volume_mount_group: '',
    },
    access_mode: { mode: change.mode ?? 'SINGLE_NODE_WRITER' },
  };
}

function publishWith(
  p: PluginHarness,
  volumeId: string,
  capabilityOfCall: Capability,
  target = join(p.dir, 'pods', volumeId, 'mount'),
) {
  const context = { ...podInfo({ name: 'app-0', namespace: 'sandbox' }), ...embeddedCA() };
  return p.client.nodeCall('NodePublishVolume', {
    ...inlineVolumeCall(volumeId, target, context),
    volume_capability: capabilityOfCall,
  });
}

t.test(
  'a republish with another access mode, fs type or mount flags is AlreadyExists',
  async (t) => {
    const p = await startPlugin(t);
    const published = capability({ mountFlags: ['ro', 'context="system_u:object_r:x:s0"'] });
    await publishWith(p, 'csi-cap', published);
    const target = join(p.dir, 'pods', 'csi-cap', 'mount');
    const certificate = await readFile(join(target, 'tls.crt'), 'utf8');
    const metadataBefore = await readFile(p.dataRoot.metadataPath('csi-cap'), 'utf8');
    t.same(
      JSON.parse(metadataBefore).volumeCapability,
      {
        accessMode: 'SINGLE_NODE_WRITER',
        fsType: '',
        mountFlags: ['ro', 'context="system_u:object_r:x:s0"'],
      },
      'metadata.json records the capability of the first publish',
    );
    const variants: Array<[string, Capability, RegExp]> = [
      [
        'another access mode',
        { ...published, access_mode: { mode: 'SINGLE_NODE_READER_ONLY' } },
        /volume_capability\.access_mode: published "SINGLE_NODE_WRITER", asked for "SINGLE_NODE_READER_ONLY"$/,
      ],
      [
        'an fs type',
        { ...published, mount: { ...published.mount, fs_type: 'ext4' } },
        /volume_capability\.mount\.fs_type: published \(unset\), asked for "ext4"$/,
      ],
      [
        'a mount flag less',
        { ...published, mount: { ...published.mount, mount_flags: ['ro'] } },
        /volume_capability\.mount\.mount_flags: published "ro,context=\\"system_u:object_r:x:s0\\"", asked for "ro"$/,
      ],
      [
        'the flags in another order',
        {
          ...published,
          mount: { ...published.mount, mount_flags: ['context="system_u:object_r:x:s0"', 'ro'] },
        },
        /volume_capability\.mount\.mount_flags: /,
      ],
    ];
    for (const [name, other, message] of variants) {
      await rejectsWith(t, publishWith(p, 'csi-cap', other), status.ALREADY_EXISTS, message);
      t.equal(
        await readFile(p.dataRoot.metadataPath('csi-cap'), 'utf8'),
        metadataBefore,
        `${name}: metadata.json unchanged`,
      );
      t.equal(
        await readFile(join(target, 'tls.crt'), 'utf8'),
        certificate,
        `${name}: the certificate still served`,
      );
    }
    await publishWith(p, 'csi-cap', published);
    t.pass('the same capability again is a normal republish');
    t.equal(
      await readFile(join(target, 'tls.crt'), 'utf8'),
      certificate,
      'with the same certificate',
    );
    t.equal((await p.requests()).length, 1, 'one CertificateRequest in all');
  },
);

t.test(
  'while a first publish is in flight, another capability is refused, not joined',
  async (t) => {
    const p = await startPlugin(t, {
      publishTimeoutMs: 20_000,
      controllers: { select: ['*', '-certificaterequests-approver'] },
    });
    const first = publishWith(p, 'csi-flight', capability()).then(
      () => undefined,
      (e: unknown) => e as { code?: number },
    );
    // The first publish is running once its request exists.
    await until(async () => (await p.requests()).length > 0, { what: 'the first request' });
    await rejectsWith(
      t,
      publishWith(p, 'csi-flight', capability({ fsType: 'xfs' })),
      status.ALREADY_EXISTS,
      /volume_capability\.mount\.fs_type: published \(unset\), asked for "xfs"/,
    );
    await p.unpublish('csi-flight', join(p.dir, 'pods', 'csi-flight', 'mount'));
    t.equal((await first)?.code, status.ABORTED, 'the first publish ends with the unpublish');
  },
);

t.test(
  'a volume recorded without a capability (an earlier version) compares only what was recorded',
  async (t) => {
    const p = await startPlugin(t);
    await publishWith(p, 'csi-old', capability());
    const path = p.dataRoot.metadataPath('csi-old');
    const { volumeCapability: _dropped, ...older } = JSON.parse(await readFile(path, 'utf8'));
    await writeFile(path, `${JSON.stringify(older)}\n`);
    await publishWith(
      p,
      'csi-old',
      capability({ mode: 'SINGLE_NODE_READER_ONLY', fsType: 'ext4' }),
    );
    t.pass('accepted: nothing recorded to compare with');
    await rejectsWith(
      t,
      p.publish('csi-old', embeddedCA({ 'csi.cert-manager.io/common-name': 'changed' })),
      status.ALREADY_EXISTS,
      /csi\.cert-manager\.io\/common-name: published \(unset\), asked for "changed"/,
    );
  },
);

t.test(
  'a capability metadata.json could not hold is InvalidArgument before any work',
  async (t) => {
    const p = await startPlugin(t);
    await rejectsWith(
      t,
      publishWith(p, 'csi-flags', capability({ mountFlags: Array(600).fill('nosuid,nodev') })),
      status.INVALID_ARGUMENT,
      /^volume_capability\.mount\.mount_flags: at most 4096 bytes joined with commas \(one page, what mount\(2\) takes\), got 7799$/,
    );
    await rejectsWith(
      t,
      publishWith(p, 'csi-fs', capability({ fsType: 'f'.repeat(300) })),
      status.INVALID_ARGUMENT,
      /^volume_capability\.mount\.fs_type: at most 255 bytes, got 300$/,
    );
    t.same(await p.dataRoot.listVolumeIds(), [], 'no volume dir');
    t.same(await p.requests(), [], 'no CertificateRequest');
    await publishWith(p, 'csi-flags', capability({ mountFlags: Array(315).fill('nosuid,nodev') }));
    t.pass('4094 bytes of flags are published');
  },
);
