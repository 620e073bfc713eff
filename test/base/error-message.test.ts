import t from 'tap';
import { asError, errorMessage } from '../../src/base/error-message.js';

t.test('errorMessage accepts anything thrown', async (t) => {
  t.equal(errorMessage(new Error('m')), 'm');
  t.equal(errorMessage('text'), 'text');
  t.equal(errorMessage(42), '42');
  t.equal(errorMessage(undefined), 'undefined');
});

t.test('asError keeps Errors and wraps anything else', async (t) => {
  const err = new TypeError('kept');
  t.equal(asError(err), err);
  const wrapped = asError('plain text');
  t.ok(wrapped instanceof Error);
  t.equal(wrapped.message, 'plain text');
});
