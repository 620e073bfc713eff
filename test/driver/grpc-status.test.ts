import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import t from 'tap';
import { silentLogger } from '../../src/api/logger.js';
import { DeadlineExceededError } from '../../src/base/deadline.js';
import { type ErrorKind, errorCatalogue } from '../../src/base/error-catalogue.js';
import { CsiClient } from '../../src/driver/csi-client.js';
import { invalidArgument } from '../../src/driver/csi-error.js';
import { startCsiServer, toGrpcError } from '../../src/driver/csi-server.js';
import { grpcStatusOf } from '../../src/driver/grpc-status.js';
import { FsError } from '../../src/fs/errors.js';
import { RefusedFileError } from '../../src/fs/regular-file.js';
import { PkiError } from '../../src/pki/errors.js';
import { StoreError } from '../../src/store/errors.js';
import { TargetPathError, VolumeError } from '../../src/volume/errors.js';
import { IssuanceError } from '../../src/volume-manager/issuance/issuance-error.js';
import { RequestWaitError } from '../../src/volume-manager/issuance/request-tracker.js';
import { RepublishConflictError } from '../../src/volume-manager/policy/republish-check.js';
import { rejection } from '../support/eventually.js';

// What a CSI client (kubelet, `cert-csi publish`) gets for each error a publish or unpublish
// can end with: the codes the driver chose before the catalogue, case by case.
const publishErrors: [string, unknown, status][] = [
  ['a denied request', new IssuanceError('denied', 'denied'), status.PERMISSION_DENIED],
  ['a failed request', new IssuanceError('failed', 'failed'), status.FAILED_PRECONDITION],
  ['an issuance past its deadline', new IssuanceError('t', 'timeout'), status.DEADLINE_EXCEEDED],
  ['an issuance aborted by unpublish', new IssuanceError('a', 'aborted'), status.ABORTED],
  [
    'an issued certificate that does not fit',
    new IssuanceError('i', 'invalid-certificate'),
    status.INTERNAL,
  ],
  [
    'a republish with other attributes',
    new RepublishConflictError('csi-x', ['readOnly: false, was true']),
    status.ALREADY_EXISTS,
  ],
  ['a refused target path', new TargetPathError('a symlink'), status.FAILED_PRECONDITION],
  ['an invalid request', invalidArgument('volume_id is required'), status.INVALID_ARGUMENT],
  ['a volume error', new VolumeError('no space', { volumeId: 'csi-x' }), status.INTERNAL],
  ['a file error', new FsError('EIO', { path: '/x' }), status.INTERNAL],
  ['a refused file', new RefusedFileError('/x', 'is a FIFO'), status.INTERNAL],
  ['an API error', new StoreError('Forbidden', 'forbidden'), status.INTERNAL],
  ['a PKI error', new PkiError('bad key'), status.INTERNAL],
  ['a deadline passed', new DeadlineExceededError(5), status.INTERNAL],
  ['a wait that ended', new RequestWaitError('deleted', 'deleted'), status.INTERNAL],
  ['an error of no kind', new Error('boom'), status.INTERNAL],
  ['a thrown string', 'boom', status.INTERNAL],
  ['undefined', undefined, status.INTERNAL],
];

t.test('each error reaches a CSI client with the status of its kind', async (t) => {
  for (const [what, err, expected] of publishErrors) {
    t.equal(status[grpcStatusOf(err)], status[expected], what);
  }
});

t.test('every kind maps to the grpc-js status of its name', async (t) => {
  for (const kind of Object.keys(errorCatalogue) as ErrorKind[]) {
    const code = grpcStatusOf({ errorKind: kind });
    t.equal(status[code], errorCatalogue[kind].grpcStatus, kind);
  }
});

t.test('toGrpcError carries the status and the message', async (t) => {
  t.same(toGrpcError(new IssuanceError('request denied by policy', 'denied')), {
    code: status.PERMISSION_DENIED,
    details: 'request denied by policy',
  });
  t.same(toGrpcError('boom'), { code: status.INTERNAL, details: 'boom' });
});

t.test('over the socket, the client sees the status of the thrown kind', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'cert-csi-grpc-status-'));
  const endpoint = { kind: 'unix' as const, path: join(dir, 'csi.sock') };
  const server = await startCsiServer({
    endpoint,
    identity: { Probe: () => ({ ready: { value: true } }) },
    node: {
      NodePublishVolume: () => {
        throw new IssuanceError('timed out waiting for CertificateRequest', 'timeout');
      },
      NodeUnpublishVolume: () => {
        throw new TargetPathError('target path /t is a mount of something else');
      },
    },
    logger: silentLogger,
  });
  const client = new CsiClient(endpoint);
  t.teardown(async () => {
    client.close();
    await server.close(100);
    await rm(dir, { recursive: true, force: true });
  });
  const published = (await rejection(
    client.nodeCall('NodePublishVolume', {}, { timeoutMs: 20_000 }),
  )) as { code?: number; details?: string };
  t.equal(published.code, status.DEADLINE_EXCEEDED);
  t.equal(published.details, 'timed out waiting for CertificateRequest');
  const unpublished = (await rejection(
    client.nodeCall('NodeUnpublishVolume', {}, { timeoutMs: 20_000 }),
  )) as { code?: number; details?: string };
  t.equal(unpublished.code, status.FAILED_PRECONDITION);
  t.equal(unpublished.details, 'target path /t is a mount of something else');
});
