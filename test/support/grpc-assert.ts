import { status } from '@grpc/grpc-js';
import type { Test } from 'tap';

/** Asserts an RPC failure's gRPC code and message. */
export async function rejectsWith(
  t: Test,
  promise: Promise<unknown>,
  code: status,
  message: RegExp,
): Promise<void> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e as { code?: number; details?: string },
  );
  t.ok(err, 'the call failed');
  t.equal(err?.code, code, `code ${status[code]}`);
  t.match(err?.details, message);
}
