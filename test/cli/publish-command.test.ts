// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${POD_IPS}` is the variable syntax under test
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import t, { type Test } from 'tap';
import { silentLogger } from '../../src/api/logger.js';
import type { CommandOutput } from '../../src/cli/data-root-command.js';
import { runPublish, runUnpublish } from '../../src/cli/publish-command.js';
import { invalidArgument } from '../../src/driver/csi-error.js';
import { type ServiceHandlers, startCsiServer } from '../../src/driver/csi-server.js';
import { rejectionMessage } from '../support/eventually.js';

t.test('publish and unpublish refuse missing flags and malformed attributes', async (t) => {
  t.match(await rejectionMessage(runPublish([])), /--endpoint and --target are required/);
  t.match(
    await rejectionMessage(runPublish(['--endpoint', 'unix:///x'])),
    /--endpoint and --target are required/,
  );
  t.match(
    await rejectionMessage(
      runPublish(['--endpoint', 'unix:///x', '--target', '/t', '--attr', 'novalue']),
    ),
    /--attr "novalue": expected KEY=VALUE/,
  );
  t.match(
    await rejectionMessage(
      runPublish(['--endpoint', 'unix:///x', '--target', '/t', '--attr', '=v']),
    ),
    /--attr "=v": expected KEY=VALUE/,
  );
  t.match(
    await rejectionMessage(runUnpublish(['--target', '/t'])),
    /--endpoint and --target are required/,
  );
  t.match(
    await rejectionMessage(runPublish(['--endpoint', 'http://x', '--target', '/t'])),
    /endpoint/i,
    'an endpoint that is not unix:// or tcp:// is refused',
  );
});

t.test('a plugin that is not there: exit 1 with the gRPC code on stderr', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'cert-csi-publish-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const endpoint = `unix://${join(dir, 'absent.sock')}`;
  const written: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  try {
    t.equal(
      await runPublish([
        '--endpoint',
        endpoint,
        '--target',
        join(dir, 't'),
        '--volume-id',
        'v',
        '--attr',
        'issuer-name=x',
      ]),
      1,
    );
    t.equal(
      await runUnpublish(['--endpoint', endpoint, '--target', join(dir, 't'), '--volume-id', 'v']),
      1,
    );
  } finally {
    process.stderr.write = write;
  }
  t.match(written.join(''), /^error: UNAVAILABLE: /m, 'the code by name, then the message');
  t.equal(written.length, 2, 'one line per failed call');
});

/** A CSI server on a real socket in a temp dir, answering with the given Node handlers. */
async function fakePlugin(t: Test, node: ServiceHandlers): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'cert-csi-publish-'));
  const path = join(dir, 'csi.sock');
  const server = await startCsiServer({
    endpoint: { kind: 'unix', path },
    identity: {},
    node,
    logger: silentLogger,
  });
  t.teardown(async () => {
    await server.close(100);
    await rm(dir, { recursive: true, force: true });
  });
  return `unix://${path}`;
}

function bufferedOutput(): CommandOutput & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    stdout: { write: (text: string) => out.push(text) },
    stderr: { write: (text: string) => err.push(text) },
  };
}

t.test('publish and unpublish exit 1 after --timeout when the plugin never answers', async (t) => {
  const calls: string[] = [];
  const never = (name: string) => () => {
    calls.push(name);
    return new Promise<object>(() => {});
  };
  const endpoint = await fakePlugin(t, {
    NodePublishVolume: never('publish'),
    NodeUnpublishVolume: never('unpublish'),
  });
  const output = bufferedOutput();
  const common = ['--endpoint', endpoint, '--volume-id', 'csi-v', '--target', '/t'];
  t.equal(await runPublish([...common, '--timeout', '1s', '--attr', 'issuer-name=x'], output), 1);
  t.equal(await runUnpublish([...common, '--timeout', '1s'], output), 1);
  t.same(calls, ['publish', 'unpublish'], 'both calls reached the plugin');
  t.equal(output.err.length, 2, 'one line per call');
  for (const line of output.err) {
    t.match(line, /^error: DEADLINE_EXCEEDED: .*\(no answer within --timeout 1s\)\n$/);
  }
  t.same(output.out, [], 'nothing printed as if it worked');
  t.match(
    await rejectionMessage(runPublish([...common, '--timeout', 'soon'])),
    /^--timeout: /,
    'a malformed --timeout is refused naming the flag',
  );
  t.match(
    await rejectionMessage(runUnpublish([...common, '--timeout', '0s'])),
    /^--timeout: must be positive/,
  );
  t.match(
    await rejectionMessage(runPublish([...common, '--timeout', '600h'])),
    /^--timeout: must be positive and at most 596h, got "600h"$/,
    'a wait no timer can hold is refused (grpc-js would then wait forever)',
  );
});

t.test('a failed call exits 1 with its code, even when its message is huge', async (t) => {
  const endpoint = await fakePlugin(t, {
    NodePublishVolume: () => {
      throw invalidArgument(`csi.cert-manager.io/key-usages: "${'x'.repeat(100_000)}"`);
    },
  });
  const output = bufferedOutput();
  const code = await runPublish(
    [
      '--endpoint',
      endpoint,
      '--volume-id',
      'csi-v',
      '--target',
      '/t',
      '--timeout',
      '60s',
      '--attr',
      `key-usages=${'x'.repeat(100_000)}`,
    ],
    output,
  );
  t.equal(code, 1);
  t.equal(output.err.length, 1);
  t.match(output.err[0], /^error: INVALID_ARGUMENT: csi\.cert-manager\.io\/key-usages: "x+… \[/);
  t.ok((output.err[0] ?? '').length < 5000, 'the message arrives shortened');
});

t.test(
  'relative --target and unix:// paths are resolved against the working directory',
  async (t) => {
    const targets: string[] = [];
    const endpoint = await fakePlugin(t, {
      NodePublishVolume: (request: { target_path: string }) => {
        targets.push(request.target_path);
        throw invalidArgument('stop here');
      },
      NodeUnpublishVolume: (request: { target_path: string }) => {
        targets.push(request.target_path);
        return {};
      },
    });
    const relativeEndpoint = `unix://${relative(process.cwd(), endpoint.slice('unix://'.length))}`;
    const output = bufferedOutput();
    const common = ['--endpoint', relativeEndpoint, '--volume-id', 'csi-v'];
    t.equal(await runPublish([...common, '--target', './demo/../pod', '--attr', 'a=b'], output), 1);
    t.equal(await runUnpublish([...common, '--target', 'pod'], output), 0);
    const expected = join(process.cwd(), 'pod');
    t.same(targets, [expected, expected], 'the plugin gets absolute paths');
    t.same(output.out, [`unpublished csi-v from ${expected}\n`]);
  },
);

t.test('--pod-ip gives the pod IPs in the volume context; an empty volume is said', async (t) => {
  const contexts: Array<Record<string, string>> = [];
  const endpoint = await fakePlugin(t, {
    // A plugin that publishes the volume empty (waiting for its pod).
    NodePublishVolume: (request: { volume_context: Record<string, string> }) => {
      contexts.push(request.volume_context);
      return {};
    },
  });
  const output = bufferedOutput();
  const common = ['--endpoint', endpoint, '--volume-id', 'csi-v', '--target', '/nonexistent/t'];
  const code = await runPublish(
    [
      ...common,
      '--pod-ip',
      '10.0.0.1',
      '--pod-ip',
      'fd00::1',
      '--attr',
      'ip-sans=${POD_IPS}',
      '--attr',
      'issuer-name=x',
    ],
    output,
  );
  t.equal(code, 0);
  t.equal(contexts[0]?.['csi.storage.k8s.io/pod.ips'], '10.0.0.1,fd00::1', 'first one first');
  t.match(output.out.join(''), /^volume: +csi-v\nwaiting: +published empty; its certificate comes/);
  await runPublish([...common, '--attr', 'issuer-name=x'], output);
  t.notOk('csi.storage.k8s.io/pod.ips' in (contexts[1] ?? {}), 'no --pod-ip, no key');
  t.match(
    await rejectionMessage(runPublish([...common, '--pod-ip', '10.0.0.300'])),
    /^--pod-ip "10\.0\.0\.300": not an IP address$/,
  );
});
