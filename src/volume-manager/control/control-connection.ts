import type { Socket } from 'node:net';
import type { Logger } from '../../api/logger.js';
import type { NamespacedName } from '../../api/namespaced-name.js';
import { errorMessage } from '../../base/error-message.js';
import { type AnswerLine, formatAnswerLine } from './control-answers.js';
import {
  type ControlRequest,
  parseControlRequest,
  REQUEST_MAX_BYTES,
  type RenewOutcome,
  type RenewTarget,
  type RequestDecisionAsked,
  type UnsavedFailure,
} from './control-protocol.js';
import { LineBuffer } from './line-buffer.js';
import { RenewStream } from './renew-stream.js';

/**
 * Marks a Certificate of the plugin's store for issuance now (`cert-csi renew --certificate`);
 * resolves once the condition is written, throws with a message for the user otherwise.
 */
export type CertificateRenewHandler = (ref: NamespacedName) => Promise<{ alreadyIssuing: boolean }>;

/**
 * Writes a person's decision on a CertificateRequest of the plugin's store (`cert-csi approve`
 * / `deny`); resolves once written, throws with a message for the user otherwise.
 */
export type RequestDecisionHandler = (decision: RequestDecisionAsked) => Promise<void>;

/** The answer of a plugin whose CertificateRequests are the cluster's (kubernetes mode). */
export const NO_REQUEST_STORE_ERROR =
  'this plugin keeps no CertificateRequests (it runs with --mode kubernetes): approve or deny through the cluster, with --kubeconfig FILE';

/** The answer of a plugin whose Certificates are not its own (kubernetes mode). */
export const NO_CERTIFICATE_STORE_ERROR =
  'this plugin keeps no Certificates (it runs with --mode kubernetes): renew a Certificate through the cluster, with cert-csi renew --certificate NAMESPACE/NAME --kubeconfig FILE';

/** What the plugin answers requests with. */
export interface ControlHandlers {
  /**
   * Renews a target now; may call progress with the outcome so far each time a volume
   * finishes (the same object, growing, is fine).
   */
  renew(target: RenewTarget, progress: (soFar: RenewOutcome) => void): Promise<RenewOutcome>;
  /** The failures held in memory because metadata.json could not take them. */
  unsavedFailures(): UnsavedFailure[];
  /** The volumes whose renewal on request is asked for and not finished yet. */
  renewalsAsked(): string[];
  /** Embedded mode; without it a Certificate request gets NO_CERTIFICATE_STORE_ERROR. */
  renewCertificate?: CertificateRenewHandler | undefined;
  /** Embedded mode; without it a decision gets NO_REQUEST_STORE_ERROR. */
  decideRequest?: RequestDecisionHandler | undefined;
}

/** A socket's listener that destroys it (`this` is the socket). */
export function destroySocket(this: Socket): void {
  this.destroy();
}

/** The bounds of one connection in time and memory. */
export interface ConnectionLimits {
  /** The request line must have come this long after the connection opened. */
  requestDeadlineMs: number;
  /** Once the answer is complete, the client has this long to take what is left of it. */
  flushDeadlineMs: number;
  /** Renewal progress waits while this much of the answer is unsent (see RenewStream). */
  progressHighWaterBytes: number;
}

/**
 * Serves one connection: reads its request line (at most REQUEST_MAX_BYTES, within
 * requestDeadlineMs; later input is read and dropped, never held), answers it and closes.
 * A malformed request is answered with one error line. Never throws.
 */
export function serveConnection(
  socket: Socket,
  handlers: ControlHandlers,
  logger: Logger,
  limits: ConnectionLimits,
): void {
  const buffer = new LineBuffer(REQUEST_MAX_BYTES);
  let requested = false;
  let answered = false;
  let flushTimer: NodeJS.Timeout | undefined;
  // Once the work is done, a client that does not read keeps the rest of its answer here: not
  // for longer than this. A client already gone has nothing queued, and a timer armed after
  // 'close' would never be cleared (it held the process for 30 s).
  const flushDeadline = (): void => {
    if (socket.destroyed) return;
    flushTimer ??= setTimeout(() => socket.destroy(), limits.flushDeadlineMs);
  };
  const close = (last: AnswerLine): void => {
    answered = true;
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    socket.end(formatAnswerLine(last));
    flushDeadline();
  };
  const refuse = (why: string): void => {
    requested = true;
    clearTimeout(requestTimer);
    logger.warn({ err: why }, 'control request refused');
    close({ type: 'error', error: `malformed request: ${why}` });
  };
  const requestTimer = setTimeout(
    () => refuse(`no request line within ${limits.requestDeadlineMs} ms`),
    limits.requestDeadlineMs,
  );
  // Everything is written once 'finish' comes: what the client has not read yet stays queued
  // on its side of the socket.
  socket.once('finish', destroySocket);
  socket.on('close', () => {
    clearTimeout(requestTimer);
    clearTimeout(flushTimer);
  });
  // A client gone mid-answer: the work goes on, its answer goes nowhere.
  socket.on('error', destroySocket);
  socket.on('data', (chunk: Buffer) => {
    if (requested) return;
    let lines: string[];
    try {
      lines = buffer.push(chunk);
    } catch (err) {
      refuse(errorMessage(err));
      return;
    }
    const [line] = lines;
    if (line === undefined) return;
    requested = true;
    clearTimeout(requestTimer);
    let request: ControlRequest;
    try {
      request = parseControlRequest(line);
    } catch (err) {
      refuse(errorMessage(err));
      return;
    }
    answer(socket, { type: 'accepted' });
    serveRequest(request, { socket, handlers, logger, limits, flushDeadline }).then(
      () => close({ type: 'done' }),
      (err: unknown) => {
        logger.warn({ err: errorMessage(err) }, 'manual renewal request failed');
        close({ type: 'error', error: errorMessage(err) });
      },
    );
  });
  socket.on('end', () => {
    // The client closed its side while its answer was coming: it is gone (a killed CLI), or
    // wants no more. Its connection is released now, not when the work ends.
    if (requested) {
      if (!answered) socket.destroy();
      return;
    }
    refuse(buffer.partial ? 'the request line has no newline' : 'no request line');
  });
}

// Writes a line unless the client is gone: then the work goes on, its answer goes nowhere.
function answer(socket: Socket, line: AnswerLine): void {
  if (socket.writable) socket.write(formatAnswerLine(line));
}

/** What serving one request works with. */
interface RequestContext {
  socket: Socket;
  handlers: ControlHandlers;
  logger: Logger;
  limits: ConnectionLimits;
  /** Starts the deadline of the answer's rest, once the work is done. */
  flushDeadline: () => void;
}

// Writes the items of the answer; throws what the handler threw.
async function serveRequest(request: ControlRequest, context: RequestContext): Promise<void> {
  const { socket, handlers, logger, limits } = context;
  switch (request.op) {
    case 'status':
      // A line per volume the plugin holds something for (each volume id appears once per
      // kind), each cut to its bound (control-answers.ts).
      for (const failure of handlers.unsavedFailures()) {
        answer(socket, { ...failure, type: 'unsaved' });
      }
      for (const volumeId of handlers.renewalsAsked()) {
        answer(socket, { type: 'renewal-asked', volumeId });
      }
      return;
    case 'renew-certificate': {
      const ref = request.certificate;
      logger.info({ certificate: ref }, 'manual issuance of a Certificate requested');
      if (!handlers.renewCertificate) throw new Error(NO_CERTIFICATE_STORE_ERROR);
      const { alreadyIssuing } = await handlers.renewCertificate(ref);
      answer(socket, { ...ref, alreadyIssuing, type: 'triggered' });
      return;
    }
    case 'decide-request': {
      const { namespace, name, decision } = request.decision;
      logger.info({ request: { namespace, name }, decision }, 'CertificateRequest decided by hand');
      if (!handlers.decideRequest) throw new Error(NO_REQUEST_STORE_ERROR);
      await handlers.decideRequest(request.decision);
      return;
    }
    case 'renew': {
      logger.info({ ...request.target }, 'manual renewal requested');
      const stream = new RenewStream(socket, limits.progressHighWaterBytes);
      const outcome = await handlers.renew(request.target, (soFar) => {
        if (socket.writable) stream.update(soFar);
      });
      context.flushDeadline();
      if (socket.writable) await stream.finish(outcome);
      return;
    }
  }
}
