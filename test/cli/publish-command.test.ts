// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${POD_IPS}` is the variable syntax under test
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Metadata } from '@grpc/grpc-js';
import t, { type Test } from 'tap';
import { silentLogger } from '../../src/api/logger.js';
import type { CommandOutput } from '../../src/cli/common/command-output.js';
import { runPublish } from '../../src/cli/publish/publish-command.js';
import {
  NOTHING_UNPUBLISHED_EXIT,
  runUnpublish,
} from '../../src/cli/unpublish/unpublish-command.js';
import { invalidArgument } from '../../src/driver/csi-error.js';
import {
  AnswerWithTrailers,
  type ServiceHandlers,
  startCsiServer,
} from '../../src/driver/csi-server.js';
import {
  UNPUBLISH_OUTCOME_KEY,
  unpublishOutcomeTrailers,
} from '../../src/driver/unpublish-outcome.js';

t.test(
  'a command line publish or unpublish cannot use: one line, then where the help is',
  async (t) => {
    const call = ['--endpoint', 'unix:///x', '--volume-id', 'v', '--target', '/t'];
    // The command, its args, the line it ends with (exit 2 each time, nothing sent).
    const cases: Array<['publish' | 'unpublish', string[], string]> = [
      ['publish', [], '--endpoint is required'],
      ['publish', ['--endpoint', 'unix:///x'], '--volume-id is required'],
      ['publish', ['--endpoint', 'unix:///x', '--volume-id', 'v'], '--target is required'],
      ['unpublish', ['--target', '/t'], '--endpoint is required'],
      ['publish', [...call, '--attr', 'novalue'], '--attr "novalue": expected KEY=VALUE'],
      ['publish', [...call, '--attr', '=v'], '--attr "=v": expected KEY=VALUE'],
      [
        'publish',
        [...call, '--attr', 'dns-name=a.example'],
        '--attr dns-name: unknown attribute (did you mean dns-names?)',
      ],
      [
        'publish',
        [...call, '--attr', 'csi.cert-manager.io/isuer-name=ca'],
        '--attr csi.cert-manager.io/isuer-name: unknown attribute (did you mean issuer-name?)',
      ],
      [
        'publish',
        [...call, '--attr', 'frobnicate=1'],
        '--attr frobnicate: unknown attribute; the attributes are listed in --help',
      ],
      ['publish', ['--volumeid', 'v'], 'unknown flag --volumeid (did you mean --volume-id?)'],
      ['unpublish', [...call, '--taget', '/t'], 'unknown flag --taget (did you mean --target?)'],
      ['publish', [...call, '--target'], '--target needs a value (--target DIR)'],
      ['publish', [...call, '--help=yes'], '--help takes no value'],
      [
        'publish',
        [...call, 'stray'],
        'unexpected argument "stray": every value follows its flag (--flag VALUE)',
      ],
      [
        'publish',
        ['--endpoint', 'http://x', '--volume-id', 'v', '--target', '/t'],
        '--endpoint: invalid endpoint "http://x": expected unix://PATH or tcp://HOST:PORT',
      ],
      ['publish', [...call, '--timeout', 'soon'], '--timeout: time: invalid duration "soon"'],
      [
        'unpublish',
        [...call, '--timeout', '0s'],
        '--timeout: must be positive and at most 596h, got "0s"',
      ],
      [
        'publish',
        [...call, '--timeout', '600h'],
        // A wait no timer can hold: grpc-js would then wait forever.
        '--timeout: must be positive and at most 596h, got "600h"',
      ],
      ['publish', [...call, '--pod-ip', '10.0.0.300'], '--pod-ip "10.0.0.300": not an IP address'],
    ];
    for (const [command, args, line] of cases) {
      const output = bufferedOutput();
      const run = command === 'publish' ? runPublish : runUnpublish;
      t.equal(await run(args, output), 2, `${command} ${args.join(' ')}: exit 2`);
      t.same(
        output.err,
        [`cert-csi ${command}: ${line}\nsee cert-csi ${command} --help\n`],
        `${command} ${args.join(' ')}: one line naming the fix, then where the help is`,
      );
      t.same(output.out, [], 'no help on stdout either');
    }
  },
);

t.test('a plugin that is not there: exit 1, saying no plugin answers', async (t) => {
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
  const socket = join(dir, 'absent.sock');
  t.same(
    written,
    ['publish', 'unpublish'].map(
      (command) =>
        `cert-csi ${command}: no plugin answers at ${socket}: is 'npm start' (or cert-csi node --endpoint ${endpoint}) running?\nsee cert-csi ${command} --help\n`,
    ),
    'no plugin there, said in one line naming what to start; no gRPC internals',
  );
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
  t.same(
    output.err,
    ['publish', 'unpublish'].map(
      (command) =>
        `cert-csi ${command}: timed out after 1s waiting for the plugin; its log says why (cert-csi status --data-root DIR --volume-id csi-v shows the last error)\nsee cert-csi ${command} --help\n`,
    ),
    'which --timeout ran out and where to look; no gRPC internals',
  );
  t.same(output.out, [], 'nothing printed as if it worked');
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
  t.match(
    output.err[0],
    /^cert-csi publish: INVALID_ARGUMENT: csi\.cert-manager\.io\/key-usages: "x+… \[/,
  );
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
        return new AnswerWithTrailers({}, unpublishOutcomeTrailers({ kind: 'unpublished' }));
      },
    });
    const relativeEndpoint = `unix://${relative(process.cwd(), endpoint.slice('unix://'.length))}`;
    const output = bufferedOutput();
    const common = ['--endpoint', relativeEndpoint, '--volume-id', 'csi-v'];
    t.equal(
      await runPublish([...common, '--target', './demo/../pod', '--attr', 'issuer-name=b'], output),
      1,
    );
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
      '--attr',
      'example.com/team=payments',
    ],
    output,
  );
  t.equal(code, 0);
  t.equal(
    contexts[0]?.['example.com/team'],
    'payments',
    'a key of another prefix (an annotation for the request) is sent as given',
  );
  t.equal(contexts[0]?.['csi.storage.k8s.io/pod.ips'], '10.0.0.1,fd00::1', 'first one first');
  t.match(output.out.join(''), /^volume: +csi-v\nwaiting: +published empty; its certificate comes/);
  await runPublish([...common, '--attr', 'issuer-name=x'], output);
  t.notOk('csi.storage.k8s.io/pod.ips' in (contexts[1] ?? {}), 'no --pod-ip, no key');
});

t.test('unpublish says what the plugin did, from the trailers of its answer', async (t) => {
  const answers: Array<() => object> = [];
  const endpoint = await fakePlugin(t, {
    NodeUnpublishVolume: () => (answers.shift() as () => object)(),
  });
  const answer = (trailers: Metadata) => () => new AnswerWithTrailers({}, trailers);
  const raw = (value: string) => {
    const trailers = new Metadata();
    trailers.set(UNPUBLISH_OUTCOME_KEY, Buffer.from(value));
    return answer(trailers);
  };
  const cases: Array<[string, () => object, number, RegExp, 'out' | 'err']> = [
    [
      'unpublished',
      answer(unpublishOutcomeTrailers({ kind: 'unpublished' })),
      0,
      /^unpublished csi-v from \/pods\/a\/mount\n$/,
      'out',
    ],
    [
      'published at another target',
      answer(unpublishOutcomeTrailers({ kind: 'elsewhere', recordedTarget: '/pods/b/mount' })),
      NOTHING_UNPUBLISHED_EXIT,
      /^nothing unpublished: volume csi-v is published at \/pods\/b\/mount, not at \/pods\/a\/mount\n$/,
      'err',
    ],
    [
      'not on this node',
      answer(unpublishOutcomeTrailers({ kind: 'not-published' })),
      NOTHING_UNPUBLISHED_EXIT,
      /^nothing unpublished: volume csi-v is not published on this node\n$/,
      'err',
    ],
    [
      'a plugin that says nothing (not cert-csi)',
      () => ({}),
      0,
      /^the plugin answered success for csi-v at \/pods\/a\/mount \(it does not say whether anything was unpublished\)\n$/,
      'out',
    ],
    ['an outcome that is not JSON', raw('{"kind":'), 0, /does not say whether/, 'out'],
    ['an unknown outcome', raw('{"kind":"vanished"}'), 0, /does not say whether/, 'out'],
    ['elsewhere without a target', raw('{"kind":"elsewhere"}'), 0, /does not say whether/, 'out'],
    ['null', raw('null'), 0, /does not say whether/, 'out'],
    [
      'an outcome too large to be ours',
      raw(JSON.stringify({ kind: 'elsewhere', recordedTarget: `/${'p'.repeat(9000)}` })),
      0,
      /does not say whether/,
      'out',
    ],
  ];
  for (const [name, reply, code, message, stream] of cases) {
    answers.push(reply);
    const output = bufferedOutput();
    const args = ['--endpoint', endpoint, '--volume-id', 'csi-v', '--target', '/pods/a/mount'];
    t.equal(await runUnpublish(args, output), code, `${name}: exit ${code}`);
    const [written, silent] =
      stream === 'out' ? [output.out, output.err] : [output.err, output.out];
    t.match(written.join(''), message, `${name}: says so on std${stream}`);
    t.same(silent, [], `${name}: nothing on the other stream`);
  }
});

t.test('a recorded target too long for the trailers is cut at its start', async (t) => {
  const long = `/pods/${'d'.repeat(2000)}/mount`;
  const endpoint = await fakePlugin(t, {
    NodeUnpublishVolume: () =>
      new AnswerWithTrailers(
        {},
        unpublishOutcomeTrailers({ kind: 'elsewhere', recordedTarget: long }),
      ),
  });
  const output = bufferedOutput();
  const args = ['--endpoint', endpoint, '--volume-id', 'csi-v', '--target', '/pods/a/mount'];
  t.equal(await runUnpublish(args, output), NOTHING_UNPUBLISHED_EXIT);
  const shown = /published at (\S+), not at/.exec(output.err.join(''))?.[1] ?? '';
  t.equal(shown, `…${long.slice(-1024)}`, 'its last 1024 characters, which name the pod');
});
