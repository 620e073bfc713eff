import { status } from '@grpc/grpc-js';
import t from 'tap';
import { MalformedReviewError } from '../../src/api/admission-review.js';
import {
  type ErrorKind,
  errorCatalogue,
  errorSpecOf,
  type KindedError,
  kindOf,
} from '../../src/base/error-catalogue.js';

const kinds = Object.keys(errorCatalogue) as ErrorKind[];

t.test('every kind has a code, a gRPC status, an HTTP status and an exit code', async (t) => {
  t.ok(kinds.length > 20, 'the catalogue was read');
  for (const kind of kinds) {
    const spec = errorCatalogue[kind];
    t.match(kind, /^CERT_CSI_[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$/, `${kind}: a code of its own prefix`);
    t.type(status[spec.grpcStatus], 'number', `${kind}: ${spec.grpcStatus} is a gRPC status`);
    t.not(status[spec.grpcStatus], status.OK, `${kind}: an error is never OK`);
    t.ok(
      Number.isInteger(spec.httpStatus) && spec.httpStatus >= 400 && spec.httpStatus <= 599,
      `${kind}: HTTP ${spec.httpStatus} is an error status`,
    );
    // 0 is success; 126 and above are the shell's (not executable, not found, signals).
    t.ok(
      Number.isInteger(spec.exitCode) && spec.exitCode >= 1 && spec.exitCode <= 125,
      `${kind}: exit ${spec.exitCode} is a failure status`,
    );
    t.ok(spec.summary.length > 0 && spec.summary.length <= 100, `${kind}: a short summary`);
  }
});

t.test('no two kinds say the same thing', async (t) => {
  // The codes are the keys of one object (tsc refuses a repeated key); two entries may still
  // describe one failure under two names.
  const summaries = kinds.map((kind) => errorCatalogue[kind].summary);
  t.equal(new Set(summaries).size, summaries.length);
});

t.test('kindOf reads a declared kind and nothing else', async (t) => {
  const kinded = { errorKind: 'CERT_CSI_LOCK_HELD' };
  t.equal(kindOf(kinded), 'CERT_CSI_LOCK_HELD');
  t.equal(kindOf(new MalformedReviewError('x')), 'CERT_CSI_REVIEW_MALFORMED');
  const cases: [string, unknown][] = [
    ['an Error of no kind', new Error('x')],
    ['an unknown code', { errorKind: 'CERT_CSI_NO_SUCH_KIND' }],
    ['a property every object inherits', { errorKind: 'toString' }],
    ['a code that is not a string', { errorKind: 42 }],
    ['a string', 'CERT_CSI_LOCK_HELD'],
    ['null', null],
    ['undefined', undefined],
  ];
  for (const [what, value] of cases) t.equal(kindOf(value), undefined, what);
});

t.test('errorSpecOf answers an error of no kind as an internal error', async (t) => {
  t.equal(errorSpecOf({ errorKind: 'CERT_CSI_LOCK_HELD' }), errorCatalogue.CERT_CSI_LOCK_HELD);
  t.equal(errorSpecOf(new Error('x')), errorCatalogue.CERT_CSI_INTERNAL_ERROR);
  t.equal(errorSpecOf('thrown text'), errorCatalogue.CERT_CSI_INTERNAL_ERROR);
  t.match(errorCatalogue.CERT_CSI_INTERNAL_ERROR, {
    grpcStatus: 'INTERNAL',
    httpStatus: 500,
    exitCode: 1,
  });
});

t.test('an api error declares a kind without importing the catalogue', async (t) => {
  // api is the layer above base: its kind is a string literal, which must be a catalogue code.
  const declared: KindedError = new MalformedReviewError('x');
  t.equal(declared.errorKind, 'CERT_CSI_REVIEW_MALFORMED');
});
