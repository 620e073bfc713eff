import t from 'tap';
import { errnoCode, FsError } from '../../src/fs/errors.js';

t.test('FsError carries the path and the cause when given', async (t) => {
  const cause = Object.assign(new Error('inner'), { code: 'EIO' });
  const err = new FsError('outer', { path: '/x/y', cause });
  t.equal(err.name, 'FsError');
  t.equal(err.message, 'outer');
  t.equal(err.path, '/x/y');
  t.equal(err.cause, cause);
  t.equal(errnoCode(err.cause), 'EIO');
  t.ok(err instanceof Error);
  const bare = new FsError('bare');
  t.notOk('path' in bare, 'no path property when none is known');
  t.notOk('cause' in bare);
});

t.test('errnoCode accepts anything thrown', async (t) => {
  t.equal(errnoCode(Object.assign(new Error('x'), { code: 'ENOENT' })), 'ENOENT');
  t.equal(errnoCode(new Error('x')), undefined);
  t.equal(errnoCode(undefined), undefined);
});
