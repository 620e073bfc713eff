import { lstat, readFile, writeFile } from 'node:fs/promises';
import t from 'tap';
import type { VolumeCertificateSpec } from '../../src/api/volume-spec.js';
import { encodePrivateKey, generatePrivateKey } from '../../src/pki/keys.js';
import { VolumeError } from '../../src/volume/errors.js';
import type { VolumeMetadata } from '../../src/volume/metadata.js';
import * as volumeSecrets from '../../src/volume/volume-secrets.js';
import type { IssuanceDeps } from '../../src/volume-manager/issuance/obtain-certificate.js';
import { ODD_KINDS, oddFileMaker } from '../support/odd-files.js';
import { embeddedCA, startPlugin } from '../support/plugin-harness.js';
import { importedUrl, moduleFileUrl } from '../support/project-files.js';
import { recordingLogger } from '../support/recording-logger.js';

// A request in flight keeps its key in pending.key; a renewal resumes it with that key.

t.test('a pending.key that is no regular file is asked again for, never waited on', async (t) => {
  const plugin = await startPlugin(t);
  const make = await oddFileMaker(t);
  // A key that would resume the request if a link to it were followed.
  const linkedKey = encodePrivateKey(
    await generatePrivateKey({ algorithm: 'ECDSA', size: 256 }),
    'PKCS8',
  );
  const requestNames = async () => new Set((await plugin.requests()).map((r) => r.metadata.name));
  for (const kind of ODD_KINDS) {
    const id = `csi-pending-${kind}`;
    await plugin.publish(id, embeddedCA());
    const metadataPath = plugin.dataRoot.metadataPath(id);
    const metadata = JSON.parse(await readFile(metadataPath, 'utf8')) as VolumeMetadata;
    const before = await requestNames();
    const gone = `${id}-gone`;
    const pendingRequest = { name: gone, namespace: 'sandbox', createdAt: '2026-01-01T00:00:00Z' };
    await writeFile(metadataPath, JSON.stringify({ ...metadata, pendingRequest }));
    await make(plugin.dataRoot.pendingKeyPath(id), kind, linkedKey);
    const outcome = await plugin.manager.renewNow({ volumeId: id });
    if (kind === 'directory') {
      // The key of the request given up on cannot be removed: the attempt fails, saying so,
      // before anything is asked for.
      t.match(outcome.failed, [
        { volumeId: id, error: /^cannot remove pending key file \S+pending\.key: EISDIR/ },
      ]);
      t.same(await requestNames(), before, `${kind}: no request made`);
      continue;
    }
    t.same(outcome.failed, [], `${kind}: renewed`);
    t.same(
      outcome.renewed.map((r) => r.volumeId),
      [id],
      kind,
    );
    const created = [...(await requestNames())].filter((name) => !before.has(name));
    t.equal(created.length, 1, `${kind}: one new request`);
    t.not(created[0], gone, `${kind}: with a new key and name, not the request in flight`);
    const after = JSON.parse(await readFile(metadataPath, 'utf8')) as VolumeMetadata;
    t.equal(after.pendingRequest, undefined, `${kind}: nothing left in flight`);
    t.equal(await lstat(plugin.dataRoot.pendingKeyPath(id)).catch(() => 'gone'), 'gone', kind);
  }
});

t.test(
  'any other error reading pending.key fails the attempt: no new key on a glitch',
  async (t) => {
    const glitch = new VolumeError('cannot read pending key file /x/pending.key: EIO', {
      cause: Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO' }),
    });
    const { obtainCertificate } = await t.mockImport<
      typeof import('../../src/volume-manager/issuance/obtain-certificate.js')
    >(moduleFileUrl('src/volume-manager/issuance/obtain-certificate.ts'), {
      [importedUrl('src/volume/volume-secrets.ts')]: {
        ...volumeSecrets,
        readPendingKey: async () => {
          throw glitch;
        },
      },
    });
    // Only what the resume reads: it fails before the store or the tracker are asked.
    const deps = { logger: recordingLogger() } as unknown as IssuanceDeps;
    const spec = { pod: { namespace: 'sandbox' } } as unknown as VolumeCertificateSpec;
    const metadata: VolumeMetadata = {
      volumeId: 'csi-a',
      targetPath: '/t',
      volumeContext: {},
      pendingRequest: { name: 'r', namespace: 'sandbox', createdAt: '2026-01-01T00:00:00Z' },
    };
    await t.rejects(
      obtainCertificate(deps, 'csi-a', spec, metadata, new AbortController().signal),
      glitch,
    );
  },
);
