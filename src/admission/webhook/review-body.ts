import type { IncomingMessage } from 'node:http';
import { MalformedReviewError } from '../../api/admission-review.js';
import { quoted } from '../../api/echoed-value.js';
import type { ErrorKind } from '../../base/error-catalogue.js';
import { JsonShapeScan } from '../../base/json-shape-scan.js';
import type { ByteBudget } from './byte-budget.js';
import type { AdmissionServerLimits } from './server-limits.js';

/**
 * An HTTP error answered before any review is read (bad method, type, size, structure or a
 * full budget). `close`: the rest of the body is not read, so the answer closes the connection.
 */
export class HttpRefusal extends Error {
  constructor(
    /** Its HTTP status comes from its kind (see http-status.ts). */
    readonly errorKind: ErrorKind,
    message: string,
    readonly close = false,
  ) {
    super(message);
  }
}

/** The bytes of one request held against the shared budget, to give back once it is answered. */
export interface HeldBytes {
  bytes: number;
}

type BodyLimits = Pick<AdmissionServerLimits, 'maxBodyBytes' | 'bodyAllowanceBytes' | 'json'>;

/**
 * The body of a POST with a JSON content type. Refused with HttpRefusal, reading no more of
 * it, when larger than maxBodyBytes (413, by its Content-Length or as it arrives), when its
 * bytes past bodyAllowanceBytes do not fit in budget (503; those taken are counted in held,
 * for the caller to give back once the request is answered), or when its structure passes
 * the JSON limits (400); each chunk is scanned as it arrives, so a body nested too deep is
 * refused from its first bytes.
 */
export async function readReviewBody(
  req: IncomingMessage,
  limits: BodyLimits,
  budget: ByteBudget,
  held: HeldBytes,
): Promise<Buffer> {
  if (req.method !== 'POST') {
    req.resume();
    throw new HttpRefusal(
      'CERT_CSI_HTTP_METHOD_NOT_ALLOWED',
      `${req.method} is not allowed: POST an AdmissionReview`,
    );
  }
  const type = String(req.headers['content-type'] ?? '')
    .replace(/;.*$/, '')
    .trim()
    .toLowerCase();
  if (type !== 'application/json') {
    req.resume();
    throw new HttpRefusal(
      'CERT_CSI_CONTENT_TYPE_UNSUPPORTED',
      `content type ${quoted(type)} is not supported: send application/json`,
    );
  }
  const declared = Number(req.headers['content-length']);
  if (declared > limits.maxBodyBytes) throw tooLarge(limits.maxBodyBytes);
  return readBody(req, limits, budget, held);
}

/** A body read by readReviewBody, parsed; text that is not JSON throws MalformedReviewError. */
export function parseReviewBody(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    // The parser's own message quotes the text around the fault: the client knows its body.
    throw new MalformedReviewError('the body is not valid JSON');
  }
}

function tooLarge(max: number): HttpRefusal {
  return new HttpRefusal(
    'CERT_CSI_REVIEW_TOO_LARGE',
    `the review is larger than ${max} bytes`,
    true,
  );
}

/** The body's bytes, read under the limits of readReviewBody. */
function readBody(
  req: IncomingMessage,
  limits: BodyLimits,
  budget: ByteBudget,
  held: HeldBytes,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const scan = new JsonShapeScan(limits.json);
    let size = 0;
    let done = false;
    const finish = (outcome: () => void) => {
      if (done) return;
      done = true;
      req.off('data', onData);
      outcome();
    };
    const refuse = (refusal: HttpRefusal) =>
      finish(() => {
        req.pause();
        reject(refusal);
      });
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limits.maxBodyBytes) return refuse(tooLarge(limits.maxBodyBytes));
      const beyond = Math.max(0, size - limits.bodyAllowanceBytes) - held.bytes;
      if (beyond > 0) {
        if (!budget.take(beyond)) {
          return refuse(
            new HttpRefusal(
              'CERT_CSI_WEBHOOK_BUSY',
              'the webhook holds as many large reviews as it can at once: retry',
              true,
            ),
          );
        }
        held.bytes += beyond;
      }
      const problem = scan.feed(chunk);
      if (problem !== undefined)
        return refuse(
          new HttpRefusal(
            'CERT_CSI_REVIEW_PAST_JSON_LIMITS',
            `the body ${problem}: refused unparsed`,
            true,
          ),
        );
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => finish(() => resolve(Buffer.concat(chunks, size))));
    // A client that goes away, or the request timeout, ends the request without 'end'.
    const cut = () =>
      finish(() =>
        reject(
          new HttpRefusal(
            'CERT_CSI_REVIEW_BODY_INCOMPLETE',
            'the request ended before its body did',
            true,
          ),
        ),
      );
    req.once('close', cut);
    req.once('error', cut);
  });
}
