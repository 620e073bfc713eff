import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { runNode } from '../../src/cli/node/node-command.js';
import { NODE_DEFAULTS, NODE_HELP } from '../../src/cli/node/node-flags.js';
import { rejectionMessage } from '../support/eventually.js';

// The flag's effect on mounts is tested in a private mount namespace:
// test/plugin/data-root-medium.test.ts and test/volume/data-root-mounts.test.ts.

t.test('help documents --data-root-medium, tmpfs by default, and what a reboot does', async (t) => {
  t.equal(NODE_DEFAULTS.dataRootMedium, 'tmpfs');
  t.match(NODE_HELP, /^ {2}--data-root-medium tmpfs\|disk {2}bind mode: where private keys/m);
  t.match(NODE_HELP, /a node reboot loses\s+the keys and volumes are issued again/);
  t.match(NODE_HELP, /accepted in direct mode \(default tmpfs\)/);
});

t.test('a bad or misplaced --data-root-medium is refused before anything starts', async (t) => {
  const dir = t.testdir();
  const dirs = [
    '--data-root',
    join(dir, 'volumes'),
    '--state-dir',
    join(dir, 'state'),
    '--endpoint',
    `unix://${join(dir, 'csi.sock')}`,
  ];
  t.equal(
    await rejectionMessage(runNode([...dirs, '--data-root-medium', 'ram'])),
    '--data-root-medium: expected tmpfs or disk, got "ram"',
  );
  t.equal(
    await rejectionMessage(runNode([...dirs, '--data-root-medium=Tmpfs'])),
    '--data-root-medium: expected tmpfs or disk, got "Tmpfs"',
    'names are exact',
  );
  t.equal(
    await rejectionMessage(runNode([...dirs, '--data-root-medium', 'x'.repeat(5000)])),
    `--data-root-medium: expected tmpfs or disk, got "${'x'.repeat(100)}"…(5000 characters)`,
    'a long value is echoed shortened',
  );
  // Direct mode mounts nothing: a medium asked for there could not be kept.
  for (const medium of ['tmpfs', 'disk']) {
    t.equal(
      await rejectionMessage(
        runNode([...dirs, '--mount-mode', 'direct', '--data-root-medium', medium]),
      ),
      '--data-root-medium: only used with bind mounts; --mount-mode direct runs in direct mode here, which mounts no tmpfs',
      `--data-root-medium ${medium} with --mount-mode direct`,
    );
  }
  t.same(await readdir(dir), [], 'no data root, state dir or socket');
});
