import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { CommandHelper } from '../../src/fs/command-helper.js';
import { runCommand } from '../../src/fs/run-command.js';
import { rejectionMessage, until } from '../support/eventually.js';
import { moduleFileUrl } from '../support/project-files.js';

// The helper processes whose parent is pid (from /proc: the helper shows no pid of its own).
// runCommand's shared helper is one of them once a test used it.
function helpersOf(pid: number): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      if (parent === pid && cmdline.includes('command-helper-process')) found.push(Number(name));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

const linuxOnly = process.platform === 'linux' ? {} : { skip: 'reads /proc' };

t.test('commands run at once keep their own answers', async (t) => {
  const helper = new CommandHelper();
  t.teardown(() => helper.close());
  const replies = await Promise.all(
    Array.from({ length: 20 }, (_, i) => helper.run('echo', [`n${i}`], 10_000)),
  );
  t.same(
    replies.map((r) => (r.ok ? r.stdout : r.message)),
    Array.from({ length: 20 }, (_, i) => `n${i}\n`),
  );
});

t.test('a command past its timeout is killed and reported so', async (t) => {
  // Without the kill this would take 30 s and succeed.
  const message = await rejectionMessage(runCommand('sleep', ['30'], 200));
  t.equal(message, 'sleep 30 failed: no result within 200 ms: killed');
  t.equal(await runCommand('echo', ['after']), 'after\n', 'the helper still answers');
});

// The helper a CommandHelper started for its first command (besides any other, runCommand's).
async function ownHelper(helper: CommandHelper): Promise<number> {
  const others = helpersOf(process.pid);
  await helper.run('true', [], 10_000);
  const own = helpersOf(process.pid).filter((pid) => !others.includes(pid));
  if (own.length !== 1 || own[0] === undefined) throw new Error(`helpers: ${own.join(', ')}`);
  return own[0];
}

t.test(
  'a helper that dies fails its commands; the next one starts another',
  linuxOnly,
  async (t) => {
    const helper = new CommandHelper();
    t.teardown(() => helper.close());
    const first = await ownHelper(helper);
    const inFlight = rejectionMessage(helper.run('sleep', ['5'], 60_000));
    process.kill(first, 'SIGKILL');
    t.equal(await inFlight, 'the command helper exited (SIGKILL)');
    const second = await ownHelper(helper);
    t.not(second, first, 'a new helper');
    t.same(await helper.run('echo', ['again'], 10_000), { id: 4, ok: true, stdout: 'again\n' });
  },
);

t.test(
  'a helper that stops answering is given up on its deadline and replaced',
  linuxOnly,
  async (t) => {
    const helper = new CommandHelper({ graceMs: 300 });
    t.teardown(() => helper.close());
    const stuck = await ownHelper(helper);
    process.kill(stuck, 'SIGSTOP');
    t.teardown(() => {
      try {
        process.kill(stuck, 'SIGKILL');
      } catch {}
    });
    // 100 ms for the command, 300 ms of grace for the helper.
    t.equal(
      await rejectionMessage(helper.run('true', [], 100)),
      'the command helper gave no answer within 400 ms',
    );
    await until(() => !helpersOf(process.pid).includes(stuck), { what: 'the stuck helper to go' });
    t.not(await ownHelper(helper), stuck, 'a new helper answers');
  },
);

t.test('the helper neither keeps its parent alive nor outlives it', linuxOnly, async (t) => {
  // A parent that runs one command and ends: it must exit by itself (execFileSync would time
  // out otherwise), and its helper then exits too.
  const script = `const { runCommand } = await import(${JSON.stringify(moduleFileUrl('src/fs/run-command.ts'))});
    await runCommand('true', []);
    const { readdirSync, readFileSync } = await import('node:fs');
    const helpers = readdirSync('/proc').filter((n) => /^\\d+$/.test(n)).filter((n) => {
      try { return readFileSync('/proc/' + n + '/cmdline', 'utf8').includes('command-helper-process') && readFileSync('/proc/' + n + '/stat', 'utf8').split(') ')[1].split(' ')[1] === String(process.pid); } catch { return false; }
    });
    console.log(JSON.stringify(helpers));`;
  const out = execFileSync(
    process.execPath,
    [...process.execArgv, '--input-type=module', '-e', script],
    { encoding: 'utf8', timeout: 30_000 },
  );
  const helpers = JSON.parse(out) as string[];
  t.equal(helpers.length, 1, 'the parent had one helper, and exited');
  await until(() => helpers.every((pid) => !existsSync(`/proc/${pid}`)), {
    what: 'the orphaned helper to exit',
    timeoutMs: 10_000,
  });
  t.pass('the helper exited with its parent');
});

t.test('a command is looked up in the PATH of the asking process at the time', async (t) => {
  const dir = t.testdir({ 'cert-csi-fake-command': '#!/bin/sh\necho "fake $1"\n' });
  await chmod(join(dir, 'cert-csi-fake-command'), 0o755);
  // The shared helper was started by an earlier test, with the PATH of then.
  t.equal(await runCommand('echo', ['started']), 'started\n');
  const before = process.env.PATH;
  t.teardown(() => {
    process.env.PATH = before;
  });
  process.env.PATH = `${dir}:${before ?? ''}`;
  t.equal(await runCommand('cert-csi-fake-command', ['one']), 'fake one\n');
  process.env.PATH = before;
  t.match(await rejectionMessage(runCommand('cert-csi-fake-command', ['two'])), /not found$/);
});
