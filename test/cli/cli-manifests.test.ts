import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { runCli, startNode } from '../support/cli-process.js';
import { tempDir } from '../support/temp-dir.js';
import { nodeArgs } from './embedded-node-args.js';

t.test(
  '--manifests loads issuers and secrets; a bad file stops start-up with a clear error',
  async (t) => {
    const dir = await tempDir(t, 'cert-csi-cli-');
    const manifests = join(dir, 'manifests');
    await mkdir(manifests);
    await writeFile(
      join(manifests, 'issuers.yaml'),
      [
        'apiVersion: cert-manager.io/v1',
        'kind: Issuer',
        'metadata:',
        '  name: team-self',
        '  namespace: team-a',
        'spec:',
        '  selfSigned: {}',
        '',
      ].join('\n'),
    );
    const node = await startNode(nodeArgs(dir, ['--manifests', manifests]));
    t.teardown(() => node.stop());
    const endpoint = `unix://${join(dir, 'csi.sock')}`;
    const published = await runCli([
      'publish',
      '--endpoint',
      endpoint,
      '--volume-id',
      'csi-m-1',
      '--target',
      join(dir, 't'),
      '--pod-namespace',
      'team-a',
      '--attr',
      'issuer-name=team-self',
      '--attr',
      'common-name=team-a-app',
    ]);
    t.equal(published.code, 0, published.stderr);
    t.match(published.stdout, /^issuer: +CN=team-a-app$/m);
    await node.stop();

    await writeFile(
      join(manifests, 'broken.yaml'),
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n',
    );
    const failed = await runCli(['node', ...nodeArgs(dir, ['--manifests', manifests])]);
    t.equal(failed.code, 1);
    t.match(failed.stderr, /broken\.yaml: unsupported apiVersion\/kind "v1\/Pod"/);
  },
);
