import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import type { CertificateRequest } from '../../src/api/certificate-request.js';
import { hashIdentifier, VOLUME_ID_HASH_LABEL } from '../../src/api/labels.js';
import { CsiClient } from '../../src/driver/csi-client.js';
import { readAtomically } from '../../src/fs/atomic-writer.js';
import { DataRoot } from '../../src/volume/data-root.js';
import { type NodeProcess, startNode } from '../support/cli-process.js';
import { inlineVolumeCall, podInfo } from '../support/publish-call.js';
import { tempDir, tmpfsBase } from '../support/temp-dir.js';

// A request to the node's own issuer is signed as it is created and stored Issued before the
// volume's files are written, with no pending record on disk (local-issuance.ts). This trial
// kills `cert-csi node` with SIGKILL the moment the first such request reaches the state dir,
// so some kills land between the stored request and its files, and checks what kubelet's
// retry then finds: every volume issued with a key matching its certificate, and one request
// per volume (the orphan of the killed attempt deleted, none resumed without its key).

const ROUNDS = 4;
const VOLUMES_PER_ROUND = 4;
const NAMESPACE = 'signed';

t.setTimeout(240_000);

t.test(
  'kill -9 between a request stored Issued and its files: the retry issues anew, one request per volume',
  async (t) => {
    const work = await tempDir(t, 'cert-csi-crash-signed-', await tmpfsBase());
    const dataRoot = new DataRoot(join(work, 'volumes'));
    const stateDir = join(work, 'state');
    const requestsDir = join(stateDir, 'cert-manager.io', 'certificaterequests', NAMESPACE);
    const socket = join(work, 'csi.sock');
    const args = [
      '--endpoint',
      `unix://${socket}`,
      '--data-root',
      dataRoot.root,
      '--state-dir',
      stateDir,
      '--mount-mode',
      'direct',
      '--node-id',
      'crash-node',
      '--log-level',
      'info',
    ];
    let current: NodeProcess | undefined;
    t.teardown(() => {
      current?.child.kill('SIGKILL');
    });
    const requestFiles = async () =>
      (await readdir(requestsDir).catch(() => [] as string[])).filter((n) => n.endsWith('.json'));
    const storedRequests = async () =>
      Promise.all(
        (await requestFiles()).map(
          async (n) =>
            JSON.parse(await readFile(join(requestsDir, n), 'utf8')) as CertificateRequest,
        ),
      );
    const call = (id: string) =>
      inlineVolumeCall(id, join(work, 'pods', id), {
        ...podInfo({
          name: `pod-${id}`,
          namespace: NAMESPACE,
          uid: '00000000-0000-4000-8000-00000000000a',
        }),
        'csi.cert-manager.io/issuer-name': 'embedded-ca',
        'csi.cert-manager.io/issuer-kind': 'ClusterIssuer',
        'csi.cert-manager.io/dns-names': `${id}.${NAMESPACE}.svc`,
      });

    const volumes: string[] = [];
    let caught = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const node = await startNode(args, { untracked: true });
      current = node;
      const client = new CsiClient({ kind: 'unix', path: socket });
      const before = new Set(await requestFiles());
      const ids = Array.from({ length: VOLUMES_PER_ROUND }, (_, i) => `csi-signed-${round}-${i}`);
      volumes.push(...ids);
      const exited = new Promise((resolve) => node.child.once('exit', resolve));
      // Kubelet's calls; the kill cuts them short, their outcome does not matter here.
      for (const id of ids)
        void client.nodeCall('NodePublishVolume', call(id)).catch(() => undefined);
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline) {
        if ((await requestFiles()).some((n) => !before.has(n))) break;
        await sleep(1);
      }
      node.child.kill('SIGKILL');
      await exited;
      client.close();
      // What this kill left: a request stored Issued for a volume with no files yet.
      const stored = await storedRequests();
      for (const id of ids) {
        const ours = stored.filter(
          (r) => r.metadata.labels?.[VOLUME_ID_HASH_LABEL] === hashIdentifier(id),
        );
        const files = await readAtomically(dataRoot.dataDir(id)).catch(() => undefined);
        if (ours.some((r) => r.status?.certificate) && files === undefined) caught++;
      }
    }

    // The restart and kubelet's retries of every publish.
    const node = await startNode(args, { untracked: true });
    current = node;
    const client = new CsiClient({ kind: 'unix', path: socket });
    t.teardown(() => client.close());
    for (const id of volumes) await client.nodeCall('NodePublishVolume', call(id));

    const problems: string[] = [];
    for (const id of volumes) {
      const files = await readAtomically(dataRoot.dataDir(id));
      const key = files?.get('tls.key');
      const certificate = files?.get('tls.crt');
      if (!key || !certificate) {
        problems.push(`${id}: no key or certificate`);
        continue;
      }
      if (!new X509Certificate(certificate).checkPrivateKey(createPrivateKey(key))) {
        problems.push(`${id}: the key does not match the certificate`);
      }
    }
    t.same(problems, [], `all ${volumes.length} volumes issued, each key matching its certificate`);
    const perVolume = new Map(volumes.map((id) => [hashIdentifier(id), 0]));
    for (const request of await storedRequests()) {
      const hash = request.metadata.labels?.[VOLUME_ID_HASH_LABEL] ?? '';
      perVolume.set(hash, (perVolume.get(hash) ?? 0) + 1);
    }
    t.same(
      [...perVolume.values()].filter((n) => n !== 1),
      [],
      'one request per volume: the orphans of killed attempts deleted',
    );
    t.comment(
      `${caught} of ${volumes.length} volumes were killed between their stored request and their files`,
    );
    t.equal(await node.stop(), 0, 'stops cleanly');
  },
);
