import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import t, { type Test } from 'tap';
import { DataRoot } from '../../src/volume/data-root.js';
import { VolumeError } from '../../src/volume/errors.js';
import {
  METADATA_MAX_BYTES,
  readMetadata,
  SECRET_CONTEXT_KEYS,
  stripSecrets,
  type VolumeMetadata,
  writeMetadata,
} from '../../src/volume/metadata.js';
import { ODD_KINDS, type OddKind, oddFileMaker } from '../support/odd-files.js';
import { tempDir } from '../support/temp-dir.js';

const ID = `csi-${'5c'.repeat(32)}`;

const context = {
  'csi.cert-manager.io/issuer-name': 'ca-issuer',
  'csi.cert-manager.io/dns-names': 'pod.sandbox.svc',
  'csi.storage.k8s.io/pod.name': 'app-0',
  'csi.storage.k8s.io/serviceAccount.tokens': '{"":{"token":"eyJ-secret"}}',
  'csi.cert-manager.io/pkcs12-password': 'changeit-secret',
  'csi.certmanager.k8s.io/pkcs12-password': 'legacy-secret',
  'csi.cert-manager.io/jks-password': 'jks-secret',
  'csi.certmanager.k8s.io/jks-password': 'legacy-jks-secret',
};

const full: VolumeMetadata = {
  volumeId: ID,
  targetPath: '/var/lib/kubelet/pods/0a99/volumes/kubernetes.io~csi/tls/mount',
  volumeContext: context,
  volumeMountGroup: '2000',
  volumeCapability: { accessMode: 'SINGLE_NODE_WRITER', fsType: '', mountFlags: ['ro'] },
  nextIssuanceTime: '2026-11-20T10:00:00Z',
  notAfter: '2026-12-20T10:00:00Z',
  pendingRequest: {
    name: 'req-1',
    namespace: 'sandbox',
    uid: 'u-1',
    createdAt: '2026-11-19T10:00:00Z',
  },
  lastError: { message: 'issuer not ready', time: '2026-11-19T09:00:00Z' },
  failures: 2,
  nextRetryTime: '2026-11-19T09:05:00Z',
};

async function volume(t: Test) {
  const root = new DataRoot(`${await tempDir(t)}/root`);
  await root.ensure();
  await root.ensureVolume(ID);
  return root;
}

t.test('stripSecrets removes tokens and both keystore password keys, and copies', async (t) => {
  t.same(SECRET_CONTEXT_KEYS.length, 5);
  const stripped = stripSecrets(context);
  t.same(Object.keys(stripped).sort(), [
    'csi.cert-manager.io/dns-names',
    'csi.cert-manager.io/issuer-name',
    'csi.storage.k8s.io/pod.name',
  ]);
  t.not(stripped, context);
  t.equal(Object.keys(context).length, 8, 'input untouched');
});

t.test('write then read round-trips, 0600, one JSON line, no secrets on disk', async (t) => {
  const root = await volume(t);
  await writeMetadata(root, full);
  const path = root.metadataPath(ID);
  t.equal((await stat(path)).mode & 0o7777, 0o600);
  const text = await readFile(path, 'utf8');
  t.notMatch(text, /secret/, 'no secret value reached the file');
  t.match(text, /^\{.*\}\n$/);
  t.same(await readMetadata(root, ID), { ...full, volumeContext: stripSecrets(context) });
  t.same(
    (await readdir(root.volumeDir(ID))).sort(),
    ['data', 'metadata.json'],
    'no temp files left behind',
  );
});

t.test('a minimal record round-trips without optional fields', async (t) => {
  const root = await volume(t);
  const minimal: VolumeMetadata = { volumeId: ID, targetPath: '/t', volumeContext: {} };
  await writeMetadata(root, minimal);
  t.strictSame(await readMetadata(root, ID), minimal);
  await writeMetadata(root, {
    ...minimal,
    pendingRequest: { name: 'r', namespace: 'n', createdAt: 'x' },
  });
  t.strictSame((await readMetadata(root, ID)).pendingRequest, {
    name: 'r',
    namespace: 'n',
    createdAt: 'x',
  });
});

t.test(
  'unknown fields in the file are dropped, secrets in an old file stripped on read',
  async (t) => {
    const root = await volume(t);
    await writeFile(
      root.metadataPath(ID),
      JSON.stringify({ volumeId: ID, targetPath: '/t', volumeContext: context, extra: 1 }),
    );
    t.strictSame(await readMetadata(root, ID), {
      volumeId: ID,
      targetPath: '/t',
      volumeContext: stripSecrets(context),
    });
  },
);

t.test('read errors name the file and carry the volume id', async (t) => {
  const root = await volume(t);
  const path = root.metadataPath(ID);
  const expectError = async (message: RegExp, what: string) => {
    const err = await readMetadata(root, ID).catch((e: unknown) => e);
    t.type(err, VolumeError, what);
    t.equal((err as VolumeError).volumeId, ID);
    t.match((err as Error).message, message, what);
    t.match((err as Error).message, path);
  };
  await expectError(/does not exist/, 'missing');
  await writeFile(path, '{"volumeId":');
  await expectError(/is not valid JSON/, 'truncated');
  const base = { volumeId: ID, targetPath: '/t', volumeContext: {} };
  const shapes: Array<[unknown, RegExp]> = [
    [[], /is invalid: not a JSON object/],
    [null, /not a JSON object/],
    [{ ...base, volumeId: 7 }, /volumeId must be a string/],
    [{ ...base, targetPath: undefined }, /targetPath must be a string/],
    [{ ...base, volumeContext: [] }, /volumeContext must be an object/],
    [{ ...base, volumeContext: { a: 1 } }, /volumeContext\.a must be a string/],
    [{ ...base, nextIssuanceTime: 5 }, /nextIssuanceTime must be a string/],
    [{ ...base, volumeMountGroup: 2000 }, /volumeMountGroup must be a string/],
    [{ ...base, volumeCapability: 'rw' }, /volumeCapability must be an object/],
    [
      { ...base, volumeCapability: { accessMode: 'X', fsType: '', mountFlags: 'ro' } },
      /volumeCapability\.mountFlags must be an array of strings/,
    ],
    [
      { ...base, volumeCapability: { accessMode: 'X', fsType: '', mountFlags: [1] } },
      /volumeCapability\.mountFlags must be an array of strings/,
    ],
    [
      { ...base, volumeCapability: { fsType: '', mountFlags: [] } },
      /volumeCapability\.accessMode must be a string/,
    ],
    [{ ...base, pendingRequest: 'req' }, /pendingRequest must be an object/],
    [
      { ...base, pendingRequest: { name: 'r', namespace: 'n' } },
      /pendingRequest\.createdAt must be a string/,
    ],
    [
      { ...base, pendingRequest: { name: 'r', namespace: 'n', createdAt: 'x', uid: 1 } },
      /pendingRequest\.uid/,
    ],
    [{ ...base, lastError: [] }, /lastError must be an object/],
    [{ ...base, lastError: { message: 'm' } }, /lastError\.time must be a string/],
    [{ ...base, failures: -1 }, /failures must be a non-negative integer/],
    [{ ...base, failures: 1.5 }, /failures must be a non-negative integer/],
    [{ ...base, failures: '1' }, /failures must be a non-negative integer/],
    [{ ...base, waiting: 'pod' }, /waiting must be an object/],
    [{ ...base, waiting: { reason: 'x' } }, /waiting\.since must be a string/],
    [{ ...base, podIPs: '10.0.0.1' }, /podIPs must be an array of strings/],
    [{ ...base, podIPs: [10] }, /podIPs must be an array of strings/],
    [{ ...base, volumeId: 'other' }, /belongs to volume "other"/],
  ];
  for (const [value, message] of shapes) {
    await writeFile(path, JSON.stringify(value));
    await expectError(message, JSON.stringify(value));
  }
});

t.test('an unreadable metadata file is reported as such', async (t) => {
  const root = await volume(t);
  await writeFile(root.volumeDir('csi-file'), 'a file where a volume dir belongs');
  await t.rejects(readMetadata(root, 'csi-file'), {
    message: /^metadata file \S+ cannot be read: ENOTDIR/,
  });
});

t.test('only a regular metadata.json of at most 4 MiB is read, never blocking', async (t) => {
  const root = await volume(t);
  const make = await oddFileMaker(t);
  const path = root.metadataPath(ID);
  const kinds: Record<OddKind, string> = {
    fifo: 'a FIFO',
    'link-to-fifo': 'a symbolic link',
    socket: 'a socket',
    directory: 'a directory',
    'link-to-file': 'a symbolic link',
  };
  for (const kind of ODD_KINDS) {
    // The link's target is a valid record: only following the link would find it.
    await make(path, kind, `${JSON.stringify(full)}\n`);
    await t.rejects(
      readMetadata(root, ID),
      {
        name: 'VolumeError',
        volumeId: ID,
        message: `metadata file ${path} is not a regular file but ${kinds[kind]}: only regular files are read`,
      },
      kind,
    );
    await rm(path, { recursive: true });
  }
  await writeFile(path, ' '.repeat(METADATA_MAX_BYTES + 1));
  await t.rejects(readMetadata(root, ID), {
    message: `metadata file ${path} is larger than 4 MiB, the most read for it: not read`,
  });
});

t.test('writeMetadata refuses a record it could not read back', async (t) => {
  const root = await volume(t);
  await writeMetadata(root, full);
  const huge = { ...full, volumeContext: { big: 'x'.repeat(METADATA_MAX_BYTES) } };
  await t.rejects(writeMetadata(root, huge), {
    name: 'VolumeError',
    volumeId: ID,
    message: /^refusing to write metadata to \S+: it is \d+ bytes, more than 4 MiB$/,
  });
  t.same(await readMetadata(root, ID), { ...full, volumeContext: stripSecrets(context) }, 'kept');
});

t.test('writeMetadata never creates a removed volume and refuses invalid records', async (t) => {
  const root = await volume(t);
  await root.removeVolume(ID);
  await t.rejects(writeMetadata(root, full), {
    name: 'VolumeError',
    volumeId: ID,
    message: /cannot write metadata file .*: the volume dir does not exist/,
  });
  t.equal(await root.hasVolume(ID), false);
  await root.ensureVolume(ID);
  await t.rejects(writeMetadata(root, { ...full, failures: -3 }), {
    message: /refusing to write invalid metadata to .*failures/,
  });
  await mkdir(`${root.metadataPath(ID)}/inside`, { recursive: true });
  await t.rejects(writeMetadata(root, full), {
    message: /cannot write metadata file .*EISDIR|ENOTEMPTY/,
  });
  t.throws(() => root.metadataPath('../x'), VolumeError);
  await t.rejects(writeMetadata(root, { ...full, volumeId: '../x' }), VolumeError);
});
