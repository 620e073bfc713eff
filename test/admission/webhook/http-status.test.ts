import t from 'tap';
import { ObjectShapeError } from '../../../src/admission/object-shape.js';
import { MissingObjectError } from '../../../src/admission/webhook/cert-manager-admission.js';
import {
  FAILURE_STATUS,
  httpStatusOf,
  isRefusalStatus,
} from '../../../src/admission/webhook/http-status.js';
import { HttpRefusal } from '../../../src/admission/webhook/review-body.js';
import { MalformedReviewError } from '../../../src/api/admission-review.js';
import { PkiError } from '../../../src/pki/errors.js';
import { StoreError } from '../../../src/store/errors.js';

// The status of each error the webhook answers, as it answered them before the catalogue.
const answers: [string, unknown, number][] = [
  ['a wrong method', new HttpRefusal('CERT_CSI_HTTP_METHOD_NOT_ALLOWED', 'm'), 405],
  ['a wrong content type', new HttpRefusal('CERT_CSI_CONTENT_TYPE_UNSUPPORTED', 'm'), 415],
  ['a body too large', new HttpRefusal('CERT_CSI_REVIEW_TOO_LARGE', 'm', true), 413],
  ['a full byte budget', new HttpRefusal('CERT_CSI_WEBHOOK_BUSY', 'm', true), 503],
  ['a body past the JSON limits', new HttpRefusal('CERT_CSI_REVIEW_PAST_JSON_LIMITS', 'm'), 400],
  ['a body cut short', new HttpRefusal('CERT_CSI_REVIEW_BODY_INCOMPLETE', 'm', true), 400],
  ['a malformed target', new HttpRefusal('CERT_CSI_REQUEST_TARGET_MALFORMED', 'm'), 400],
  ['an unknown path', new HttpRefusal('CERT_CSI_ENDPOINT_NOT_FOUND', 'm'), 404],
  ['a malformed review', new MalformedReviewError('request.uid is missing'), 400],
  ['a review without its object', new MissingObjectError('request.object is missing'), 400],
  ['a field of the wrong type', new ObjectShapeError('spec must be an object'), 400],
  ['an API error', new StoreError('NotFound', 'not found'), 500],
  ['a PKI error', new PkiError('bad key'), 500],
  ['an error of no kind', new Error('boom'), 500],
  ['a thrown string', 'boom', 500],
];

t.test('each error is answered with the HTTP status of its kind', async (t) => {
  for (const [what, err, expected] of answers) t.equal(httpStatusOf(err), expected, what);
  t.equal(FAILURE_STATUS, 500);
});

t.test('4xx and 503 are refusals told to the client; other 5xx are failures', async (t) => {
  const cases: [number, boolean][] = [
    [400, true],
    [404, true],
    [405, true],
    [413, true],
    [415, true],
    [499, true],
    [500, false],
    [502, false],
    [503, true],
    [504, false],
  ];
  for (const [code, refusal] of cases) t.equal(isRefusalStatus(code), refusal, String(code));
});
