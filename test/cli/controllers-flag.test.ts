import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import t from 'tap';
import { runController } from '../../src/cli/controller-command.js';
import { CONTROLLER_HELP } from '../../src/cli/controller-flags.js';
import { KNOWN_CONTROLLERS } from '../../src/cli/controller-names.js';
import { NODE_HELP, runNode } from '../../src/cli/node-command.js';
import { rejectionMessage } from '../support/eventually.js';
import { rejectsWith } from '../support/grpc-assert.js';
import { embeddedCA, startPlugin } from '../support/plugin-harness.js';

const UNKNOWN =
  'validation failed for \'--controllers\': ["certificates-trigger" is not in the list of known controllers]';

t.test('both commands document --controllers and every controller name', async (t) => {
  t.same(KNOWN_CONTROLLERS, [
    'certificaterequests-approver',
    'certificaterequests-issuer-ca',
    'certificaterequests-issuer-selfsigned',
    'issuers',
    'clusterissuers',
  ]);
  for (const help of [NODE_HELP, CONTROLLER_HELP]) {
    t.match(help, /^ {2}--controllers LIST/m);
    for (const name of KNOWN_CONTROLLERS) t.match(help, new RegExp(`^ +${name}$`, 'm'));
  }
});

t.test('an unknown controller is refused before anything starts', async (t) => {
  const dir = t.testdir();
  const args = [
    '--data-root',
    join(dir, 'volumes'),
    '--state-dir',
    join(dir, 'state'),
    '--endpoint',
    `unix://${join(dir, 'csi.sock')}`,
    '--mount-mode',
    'direct',
  ];
  t.equal(
    await rejectionMessage(runNode([...args, '--controllers', '*,-certificates-trigger'])),
    UNKNOWN,
  );
  t.same(await readdir(dir), [], 'no data root, state dir or socket');
  t.equal(
    await rejectionMessage(runNode(['--mode', 'kubernetes', '--controllers', '*'])),
    '--controllers: only used with --mode embedded',
  );
  // Checked before any kubeconfig is read: none exists at this path.
  t.equal(
    await rejectionMessage(
      runController([
        '--kubeconfig',
        join(dir, 'missing'),
        '--controllers',
        'certificates-trigger',
      ]),
    ),
    UNKNOWN,
  );
});

t.test('embedded mode runs only the selected controllers', async (t) => {
  const p = await startPlugin(t, {
    publishTimeoutMs: 1_500,
    controllers: { select: ['*', '-certificaterequests-issuer-ca'] },
  });
  t.same(p.controllers.names, [
    'certificaterequests-approver',
    'certificaterequests-issuer-selfsigned',
    'issuers',
    'clusterissuers',
  ]);
  // SelfSigned still signs; nobody signs for the CA issuer, so that publish runs out of time.
  await p.publish('csi-self', {
    'csi.cert-manager.io/issuer-name': 'self-signed',
    'csi.cert-manager.io/issuer-kind': 'ClusterIssuer',
    'csi.cert-manager.io/common-name': 'self.sandbox',
  });
  await rejectsWith(t, p.publish('csi-ca', embeddedCA()), status.DEADLINE_EXCEEDED, /waiting/);
  // The request was created and approved, and left unsigned: no Ready condition at all.
  const ca = (await p.requests()).filter((r) => r.spec.issuerRef.name === 'embedded-ca');
  t.equal(ca.length, 1);
  t.same(
    ca[0]?.status?.conditions?.map((c) => c.type),
    ['Approved'],
  );
});
