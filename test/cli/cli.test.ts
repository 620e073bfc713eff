import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { runCli, servedAddress, startNode } from '../support/cli-process.js';
import { run } from '../support/issuer-fixtures.js';
import { tempDir } from '../support/temp-dir.js';
import { nodeArgs } from './embedded-node-args.js';

// Help, unknown commands and bad flags are checked in this process: test/cli/commands.test.ts;
// --manifests in cli-manifests.test.ts.

t.test(
  'node + publish + unpublish from the command line; the embedded CA survives a restart',
  async (t) => {
    const dir = await tempDir(t, 'cert-csi-cli-');
    // Metrics and health on free ports (issue 14): the process logs where it listens.
    const node = await startNode(
      nodeArgs(dir, [
        '--metrics-bind-address=127.0.0.1:0',
        '--health-probe-bind-address=127.0.0.1:0',
      ]),
    );
    t.teardown(() => node.stop());
    const endpoint = `unix://${join(dir, 'csi.sock')}`;
    const target = join(dir, 'target');
    const published = await runCli([
      'publish',
      '--endpoint',
      endpoint,
      '--volume-id',
      'csi-cli-1',
      '--target',
      target,
      '--attr',
      'issuer-name=embedded-ca',
      '--attr',
      'issuer-kind=ClusterIssuer',
      '--attr',
      'dns-names=${POD_NAME}.example.com',
      '--attr',
      'key-algorithm=ECDSA',
    ]);
    t.equal(published.code, 0, published.stderr);
    t.match(published.stdout, /^subject: /m);
    t.match(published.stdout, /^SANs: +DNS:cert-csi-cli\.example\.com$/m);
    t.match(published.stdout, /^not after: +\d{4}-/m);
    t.match(published.stdout, /^next renewal: +\d{4}-/m);
    t.match(published.stdout, /^files: .*tls\.key .*tls\.crt .*ca\.crt .*generation\.json$/m);
    const { stdout } = await run('openssl', [
      'verify',
      '-CAfile',
      join(target, 'ca.crt'),
      join(target, 'tls.crt'),
    ]);
    t.match(stdout, /: OK/);
    const ca = await readFile(join(target, 'ca.crt'), 'utf8');
    const [metricsAt, healthAt] = (['metrics', 'health'] as const).map((name) => {
      const address = servedAddress(node, name);
      t.match(address, /^127\.0\.0\.1:[1-9]\d*$/, `${name}: the bound address is logged`);
      return address;
    });
    t.equal((await fetch(`http://${healthAt}/readyz`)).status, 200, '/readyz once started');
    const exposition = await (await fetch(`http://${metricsAt}/metrics`)).text();
    t.match(exposition, /^certmanager_csi_managed_volume_count\{node="[a-z0-9]+"\} 1$/m);
    t.match(exposition, /^# TYPE certmanager_clusterissuer_ready_status gauge$/m);

    const invalid = await runCli([
      'publish',
      '--endpoint',
      endpoint,
      '--volume-id',
      'csi-cli-2',
      '--target',
      join(dir, 't2'),
      '--attr',
      'issuer-name=embedded-ca',
      '--attr',
      'key-size=1',
    ]);
    t.equal(invalid.code, 1);
    t.match(
      invalid.stderr,
      /^cert-csi publish: INVALID_ARGUMENT: .*csi\.cert-manager\.io\/key-size/m,
    );

    const unpublished = await runCli([
      'unpublish',
      '--endpoint',
      endpoint,
      '--volume-id',
      'csi-cli-1',
      '--target',
      target,
    ]);
    t.equal(unpublished.code, 0, unpublished.stderr);
    t.equal(await node.stop(), 0, 'SIGTERM stops the plugin cleanly');
    t.notMatch(node.output(), /PRIVATE KEY/, 'no key material in the logs');

    const again = await startNode(nodeArgs(dir));
    t.teardown(() => again.stop());
    const republished = await runCli([
      'publish',
      '--endpoint',
      endpoint,
      '--volume-id',
      'csi-cli-3',
      '--target',
      join(dir, 't3'),
      '--attr',
      'issuer-name=embedded-ca',
      '--attr',
      'issuer-kind=ClusterIssuer',
    ]);
    t.equal(republished.code, 0, republished.stderr);
    t.equal(
      await readFile(join(dir, 't3', 'ca.crt'), 'utf8'),
      ca,
      'the same embedded CA after a restart',
    );
    t.notMatch(again.output(), /created the embedded CA/, 'not created twice');
  },
);
