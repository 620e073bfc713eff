import t from 'tap';
import { runCommand } from '../../src/fs/run-command.js';

t.test('resolves stdout', async (t) => {
  t.equal(await runCommand('echo', ['a b', 'c']), 'a b c\n');
});

t.test('failures name the command line and say why', async (t) => {
  await t.rejects(runCommand('ls', ['/does/not/exist']), {
    name: 'FsError',
    message: /^ls \/does\/not\/exist failed: ls: cannot access/,
  });
  await t.rejects(runCommand('false', []), { message: /^false failed: Command failed: false/ });
  await t.rejects(runCommand('no-such-command-cert-csi', ['x']), {
    message: 'no-such-command-cert-csi x failed: no-such-command-cert-csi not found',
  });
});

t.test('arguments are never interpreted by a shell', async (t) => {
  t.equal(await runCommand('echo', ['$(id)', ';', '|']), '$(id) ; |\n');
});
