// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${POD_IP}` is the variable syntax under test
// What the command line says is what the plugin did, with a real `cert-csi node` and real
// `cert-csi` commands: a refused publish (pod IP missing, issuer missing, attribute invalid,
// target occupied) is forgotten (renew --all exits 0, status lists
// nothing), a refusal aimed at a published volume leaves it renewable, and an unpublish that
// did nothing says so with exit status 3.
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { VolumeStatus } from '../../src/volume-manager/control/volume-status.js';
import { runCli, startNode } from '../support/cli-process.js';

// Child processes start slowly on a busy 2-core machine.
t.setTimeout(300_000);

t.test('refused publishes are forgotten; unpublish says when it did nothing', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'cert-csi-outcomes-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const endpoint = `unix://${join(dir, 'csi.sock')}`;
  const dataRoot = join(dir, 'volumes');
  const node = await startNode([
    '--endpoint',
    endpoint,
    '--data-root',
    dataRoot,
    '--state-dir',
    join(dir, 'state'),
    '--mount-mode',
    'direct',
    '--node-id',
    'outcomes-test',
  ]);
  t.teardown(() => node.stop());
  const publish = (volumeId: string, target: string, ...flags: string[]) =>
    runCli([
      'publish',
      '--endpoint',
      endpoint,
      '--volume-id',
      volumeId,
      '--target',
      target,
      '--attr',
      'issuer-name=embedded-ca',
      '--attr',
      'issuer-kind=ClusterIssuer',
      '--attr',
      'key-algorithm=ECDSA',
      ...flags,
    ]);
  const unpublish = (volumeId: string, target: string) =>
    runCli(['unpublish', '--endpoint', endpoint, '--volume-id', volumeId, '--target', target]);
  const renewAll = () => runCli(['renew', '--data-root', dataRoot, '--all']);
  const statusRows = async () => {
    const status = await runCli(['status', '--data-root', dataRoot, '--json']);
    t.equal(status.code, 0, status.stderr);
    return JSON.parse(status.stdout) as VolumeStatus[];
  };

  const occupied = join(dir, 'occupied');
  await mkdir(occupied);
  await writeFile(join(occupied, 'app.conf'), 'mine');
  // issuer-kind forgotten: the default Issuer does not exist, the embedded ClusterIssuer does.
  const noIssuer = runCli([
    'publish',
    '--endpoint',
    endpoint,
    '--volume-id',
    'csi-no-issuer',
    '--target',
    join(dir, 't-no-issuer'),
    '--attr',
    'issuer-name=embedded-ca',
  ]);
  const [noIp, zoned, badTarget, missingIssuer, badAttribute] = await Promise.all([
    publish('csi-no-ip', join(dir, 't-no-ip'), '--attr', 'ip-sans=${POD_IP}'),
    // A zoned address passes the worst cases checked at publish but no SAN can hold it.
    publish(
      'csi-zoned',
      join(dir, 't-zoned'),
      '--attr',
      'ip-sans=${POD_IPS}',
      '--pod-ip',
      '10.0.0.1',
      '--pod-ip',
      'fe80::1%eth0',
    ),
    publish('csi-occupied', occupied),
    noIssuer,
    publish('csi-bad-duration', join(dir, 't-bad-duration'), '--attr', 'duration=soon'),
  ]);
  t.equal(noIp.code, 1, 'no --pod-ip: refused');
  t.match(
    noIp.stderr,
    /^cert-csi publish: FAILED_PRECONDITION: the pod is not ready for issuance: pod has no IP/,
  );
  t.equal(zoned.code, 1, 'a zoned pod IP in ip-sans: refused');
  t.match(
    zoned.stderr,
    /^cert-csi publish: FAILED_PRECONDITION: the volume attributes are invalid with the pod's IPs/,
  );
  t.equal(badTarget.code, 1, 'a target with files of its own: refused');
  t.match(
    badTarget.stderr,
    /^cert-csi publish: FAILED_PRECONDITION: target path .* is a non-empty directory/,
  );
  t.equal(missingIssuer.code, 1, 'an issuer the store does not have: refused at once');
  t.match(
    missingIssuer.stderr,
    /^cert-csi publish: FAILED_PRECONDITION: Issuer "embedded-ca" not found in namespace default; a ClusterIssuer of that name exists: set csi\.cert-manager\.io\/issuer-kind: ClusterIssuer;/,
  );
  t.equal(badAttribute.code, 1, 'an invalid attribute: refused');
  t.match(
    badAttribute.stderr,
    /^cert-csi publish: INVALID_ARGUMENT: .*csi\.cert-manager\.io\/duration: Invalid value: "soon"/,
  );

  // Each command is a process start: those that only read what the refusals left run together.
  const [afterRefusals, rowsAfterRefusals] = await Promise.all([renewAll(), statusRows()]);
  t.equal(
    afterRefusals.code,
    0,
    `renew --all exits 0: ${afterRefusals.stdout}${afterRefusals.stderr}`,
  );
  t.equal(afterRefusals.stdout, 'no volumes to renew\n', 'no refused volume is renewed or failed');
  t.same(rowsAfterRefusals, [], 'status lists no volume');

  const target = join(dir, 'pods', 'app', 'mount');
  const published = await publish('csi-app', target);
  t.equal(published.code, 0, published.stderr);
  const conflict = await publish('csi-app', target, '--attr', 'common-name=other');
  t.equal(conflict.code, 1, 'a republish with another attribute: refused');
  t.match(
    conflict.stderr,
    /^cert-csi publish: ALREADY_EXISTS: volume csi-app is already published with other settings/,
  );
  const renewed = await renewAll();
  t.equal(renewed.code, 0, renewed.stderr);
  t.match(
    renewed.stdout,
    /^renewed csi-app: not after \S+, next renewal \S+\n$/,
    'the published volume only',
  );
  t.match(await statusRows(), [{ volumeId: 'csi-app', state: 'ok' }]);

  const wrongTarget = join(dir, 'pods', 'other', 'mount');
  const [wrong, unknown] = await Promise.all([
    unpublish('csi-app', wrongTarget),
    unpublish('csi-never', target),
  ]);
  t.equal(wrong.code, 3, 'another target: exit 3');
  t.equal(
    wrong.stderr,
    `nothing unpublished: volume csi-app is published at ${target}, not at ${wrongTarget}\n`,
  );
  t.equal(wrong.stdout, '', 'nothing said to have worked');
  t.equal(unknown.code, 3, 'an unknown volume: exit 3');
  t.equal(unknown.stderr, 'nothing unpublished: volume csi-never is not published on this node\n');
  await stat(join(target, 'tls.crt'));
  t.match(await statusRows(), [{ volumeId: 'csi-app', state: 'ok' }], 'the volume is still there');

  const right = await unpublish('csi-app', target);
  t.equal(right.code, 0, right.stderr);
  t.equal(right.stdout, `unpublished csi-app from ${target}\n`);
  await t.rejects(stat(join(target, 'tls.crt')), { code: 'ENOENT' }, 'its files are gone');
  const [again, rowsLeft] = await Promise.all([unpublish('csi-app', target), statusRows()]);
  t.equal(again.code, 3, 'unpublished already: exit 3');
  t.equal(again.stderr, 'nothing unpublished: volume csi-app is not published on this node\n');
  t.same(rowsLeft, [], 'no volume left');
  t.equal(
    await readFile(join(occupied, 'app.conf'), 'utf8'),
    'mine',
    'the occupied target is untouched',
  );
});
