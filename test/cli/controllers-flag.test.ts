import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import {
  type CertificateRequest,
  CertificateRequestKind,
} from '../../src/api/certificate-request.js';
import { runController } from '../../src/cli/controller/controller-command.js';
import { CONTROLLER_HELP } from '../../src/cli/controller/controller-flags.js';
import { KNOWN_CONTROLLERS } from '../../src/cli/controller/controller-names.js';
import { runNode } from '../../src/cli/node/node-command.js';
import { NODE_HELP } from '../../src/cli/node/node-flags.js';
import { rejectionMessage, until } from '../support/eventually.js';
import { embeddedCA, startPlugin } from '../support/plugin-harness.js';

// cert-manager's ACME signer: a name cert-manager knows that cert-csi will never run.
const UNKNOWN =
  'validation failed for \'--controllers\': ["certificaterequests-issuer-acme" is not in the list of known controllers]';

const CERTIFICATE_CONTROLLERS = [
  'certificates-trigger',
  'certificates-issuing',
  'certificates-key-manager',
  'certificates-request-manager',
  'certificates-readiness',
  'certificates-revision-manager',
];

const CSR_CONTROLLERS = [
  'certificatesigningrequests-issuer-ca',
  'certificatesigningrequests-issuer-selfsigned',
];

const POD_CERTIFICATE_CONTROLLERS = [
  'podcertificaterequests-issuer',
  'clustertrustbundles-publisher',
];

t.test('both commands document --controllers and every controller name', async (t) => {
  t.same(KNOWN_CONTROLLERS, [
    'certificaterequests-approver',
    'certificaterequests-issuer-ca',
    'certificaterequests-issuer-selfsigned',
    'issuers',
    'clusterissuers',
    ...CSR_CONTROLLERS,
    ...POD_CERTIFICATE_CONTROLLERS,
    ...CERTIFICATE_CONTROLLERS,
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
    await rejectionMessage(
      runNode([...args, '--controllers', '*,-certificaterequests-issuer-acme']),
    ),
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
        'certificaterequests-issuer-acme',
      ]),
    ),
    UNKNOWN,
  );
});

t.test('embedded mode runs only the selected controllers', async (t) => {
  const p = await startPlugin(t, {
    publishTimeoutMs: 60_000,
    controllers: { select: ['*', '-certificaterequests-issuer-ca'] },
  });
  t.same(p.controllers.names, [
    'certificaterequests-approver',
    'certificaterequests-issuer-selfsigned',
    'issuers',
    'clusterissuers',
    ...CSR_CONTROLLERS,
    ...POD_CERTIFICATE_CONTROLLERS,
    ...CERTIFICATE_CONTROLLERS,
  ]);
  // Nobody signs for the CA issuer: that publish waits (until the plugin stops at teardown).
  const waiting = p.publish('csi-ca', embeddedCA()).catch((err: unknown) => err);
  const approved = await until(
    async () =>
      (await p.requests()).find(
        (r) =>
          r.spec.issuerRef.name === 'embedded-ca' &&
          r.status?.conditions?.some((c) => c.type === 'Approved'),
      ),
    { what: 'the approved CA request', timeoutMs: 60_000 },
  );
  // SelfSigned still signs, after the CA request was approved: the signers have run since.
  await p.publish('csi-self', {
    'csi.cert-manager.io/issuer-name': 'self-signed',
    'csi.cert-manager.io/issuer-kind': 'ClusterIssuer',
    'csi.cert-manager.io/common-name': 'self.sandbox',
  });
  const ca = await p.store.get<CertificateRequest>(
    CertificateRequestKind,
    approved.metadata.name,
    approved.metadata.namespace,
  );
  t.same(
    ca.status?.conditions?.map((c) => c.type),
    ['Approved'],
    'approved and left unsigned: no Ready condition at all',
  );
  await p.stop();
  t.type(
    await waiting,
    Error,
    'the CA publish ended without a certificate when the plugin stopped',
  );
});

t.test('pod certificate flags are checked before any kubeconfig is read', async (t) => {
  const dir = t.testdir();
  const missing = ['--kubeconfig', join(dir, 'missing')];
  t.equal(
    await rejectionMessage(runController([...missing, '--trust-domain', 'Prod/Example'])),
    `--trust-domain: "Prod/Example" may contain only lowercase letters, digits, '.', '-' and '_'`,
  );
  const long = `x${'y'.repeat(300)}`;
  const tooLong = await rejectionMessage(runController([...missing, '--trust-domain', long]));
  // Echoed shortened: the first 100 characters and the length.
  t.match(tooLong, /^--trust-domain: "xy{99}"…\(301 characters\) must be at most 255 characters$/);
  t.equal(
    await rejectionMessage(runController([...missing, '--pod-certificate-max-duration', '30m'])),
    '--pod-certificate-max-duration: "30m" is shorter than 1h, the shortest pod certificate the API server accepts',
  );
  t.match(
    await rejectionMessage(runController([...missing, '--pod-certificate-max-duration', 'soon'])),
    /^--pod-certificate-max-duration: /,
  );
});
