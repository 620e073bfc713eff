import t from 'tap';
import { ECHO_LIMIT } from '../../src/api/echoed-value.js';
import {
  type PublishedVolume,
  RepublishConflictError,
  republishDifferences,
} from '../../src/volume-manager/policy/republish-check.js';

const published: PublishedVolume = {
  targetPath: '/pods/a/mount',
  volumeContext: {
    'csi.cert-manager.io/issuer-name': 'ca',
    'csi.cert-manager.io/pkcs12-password': 'old-secret',
    'csi.storage.k8s.io/pod.name': 'app-0',
  },
  volumeMountGroup: '2000',
  pkcs12Password: 'old-secret',
  issued: true,
};

t.test(
  'the same publish again has no difference; tokens and trailing slashes do not count',
  async (t) => {
    t.same(
      republishDifferences(published, {
        ...published,
        targetPath: '/pods/a/mount/',
        volumeContext: {
          ...published.volumeContext,
          'csi.storage.k8s.io/serviceAccount.tokens': '{"":{"token":"new"}}',
        },
      }),
      [],
    );
  },
);

t.test(
  'each difference names its key; long values are shortened, secrets never shown',
  async (t) => {
    const long = 'x'.repeat(5000);
    const differences = republishDifferences(published, {
      targetPath: '/pods/b/mount',
      volumeContext: {
        'csi.cert-manager.io/issuer-name': long,
        'csi.cert-manager.io/pkcs12-password': 'new-secret',
        'csi.cert-manager.io/common-name': 'added',
      },
      volumeMountGroup: undefined,
      pkcs12Password: 'new-secret',
      issued: true,
    });
    t.same(differences, [
      'target_path: published at "/pods/a/mount", asked for "/pods/b/mount"',
      'csi.cert-manager.io/common-name: published (unset), asked for "added"',
      `csi.cert-manager.io/issuer-name: published "ca", asked for "${'x'.repeat(ECHO_LIMIT)}"…(5000 characters)`,
      'csi.storage.k8s.io/pod.name: published "app-0", asked for (unset)',
      'volume_mount_group: published "2000", asked for (unset)',
      'csi.cert-manager.io/pkcs12-password: differs from the published one (not shown)',
    ]);
    const error = new RepublishConflictError('csi-x', differences);
    t.notMatch(error.message, /secret/, 'no password in the message');
    t.ok(error.message.length < 2000, 'the message stays short whatever the values');
  },
);

t.test(
  'a volume never issued may move to another target and has no stored password yet',
  async (t) => {
    const never = { ...published, issued: false, pkcs12Password: undefined };
    t.same(republishDifferences(never, { ...published, targetPath: '/pods/b/mount' }), []);
    t.same(
      republishDifferences(
        { ...never, pkcs12Password: 'old-secret' },
        { ...published, pkcs12Password: 'other' },
      ),
      ['csi.cert-manager.io/pkcs12-password: differs from the published one (not shown)'],
      'a stored password is compared',
    );
    t.same(
      republishDifferences(published, { ...published, pkcs12Password: undefined }),
      ['csi.cert-manager.io/pkcs12-password: differs from the published one (not shown)'],
      'a password dropped is a difference',
    );
  },
);

t.test('the JKS password is compared like the PKCS#12 one, and never shown', async (t) => {
  const withJks = { ...published, jksPassword: 'jks-old-secret' };
  t.same(republishDifferences(withJks, { ...withJks }), [], 'the same password');
  const differences = republishDifferences(withJks, { ...withJks, jksPassword: 'jks-new-secret' });
  t.same(differences, [
    'csi.cert-manager.io/jks-password: differs from the published one (not shown)',
  ]);
  t.notMatch(new RepublishConflictError('csi-x', differences).message, /secret/);
  t.same(
    republishDifferences(
      { ...withJks, issued: false, jksPassword: undefined },
      { ...withJks, jksPassword: 'first' },
    ),
    [],
    'a volume never issued has no stored JKS password to compare yet',
  );
});

t.test('the volume capability is compared field by field, when it was recorded', async (t) => {
  const capability = { accessMode: 'SINGLE_NODE_WRITER', fsType: '', mountFlags: ['ro'] };
  const recorded = { ...published, volumeCapability: capability };
  const cases: Array<[string, Partial<typeof capability>, string[]]> = [
    ['the same capability', {}, []],
    [
      'another access mode',
      { accessMode: 'SINGLE_NODE_READER_ONLY' },
      [
        'volume_capability.access_mode: published "SINGLE_NODE_WRITER", asked for "SINGLE_NODE_READER_ONLY"',
      ],
    ],
    [
      'an fs type',
      { fsType: 'ext4' },
      ['volume_capability.mount.fs_type: published (unset), asked for "ext4"'],
    ],
    [
      'a mount flag more',
      { mountFlags: ['ro', 'noexec'] },
      ['volume_capability.mount.mount_flags: published "ro", asked for "ro,noexec"'],
    ],
    [
      'no mount flags',
      { mountFlags: [] },
      ['volume_capability.mount.mount_flags: published "ro", asked for (unset)'],
    ],
    [
      'the flags split otherwise (the same when joined)',
      { mountFlags: ['ro,noexec'] },
      ['volume_capability.mount.mount_flags: published "ro", asked for "ro,noexec"'],
    ],
  ];
  for (const [name, change, expected] of cases) {
    const next = { ...recorded, volumeCapability: { ...capability, ...change } };
    t.same(republishDifferences(recorded, next), expected, name);
  }
  t.same(
    republishDifferences(
      { ...recorded, volumeCapability: { ...capability, mountFlags: ['ro', 'noexec'] } },
      { ...recorded, volumeCapability: { ...capability, mountFlags: ['noexec', 'ro'] } },
    ),
    ['volume_capability.mount.mount_flags: published "ro,noexec", asked for "noexec,ro"'],
    'the order of the flags counts',
  );
  const long = { ...capability, mountFlags: [`context="${'s'.repeat(3000)}"`] };
  const [shortened] = republishDifferences(recorded, { ...recorded, volumeCapability: long });
  t.ok((shortened?.length ?? 0) < 400, 'a long value is shortened');
  t.same(
    republishDifferences(published, {
      ...published,
      volumeCapability: { accessMode: 'MULTI_NODE_MULTI_WRITER', fsType: 'xfs', mountFlags: [] },
    }),
    [],
    'metadata written before the capability was recorded: only what was recorded is compared',
  );
});
