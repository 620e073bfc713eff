import { lstat } from 'node:fs/promises';
import { connect } from 'node:net';
import type { NamespacedName } from '../../api/namespaced-name.js';
import type { ErrorKind } from '../../base/error-catalogue.js';
import { errorMessage } from '../../base/error-message.js';
import { byteSizeText } from '../../fs/regular-file.js';
import type { DataRoot } from '../../volume/data-root.js';
import {
  ANSWER_LINE_MAX_BYTES,
  ANSWER_MAX_BYTES,
  type AnswerLine,
  parseAnswerLine,
} from './control-answers.js';
import {
  type CertificateTriggered,
  type ControlRequest,
  controlSocketOf,
  formatControlRequest,
  type PluginStatus,
  type RenewOutcome,
  type RenewTarget,
  type RequestDecisionAsked,
} from './control-protocol.js';
import { fileKind } from './file-kind.js';
import { LineBuffer } from './line-buffer.js';
import { socketAddress } from './socket-address.js';

/**
 * Why a request got no (complete) answer:
 * - no-plugin: nothing listens at the socket (none there, not a socket, connection refused);
 * - no-answer: the deadline passed before the plugin took the request;
 * - late: the plugin took the request, the deadline passed before its answer was complete;
 * - lost: the connection ended before the answer was complete (the plugin stopped);
 * - refused: the plugin answered with an error (detail is its message);
 * - unreadable: the answer is malformed, or larger than the client reads.
 */
export type ControlFailure = 'no-plugin' | 'no-answer' | 'late' | 'lost' | 'refused' | 'unreadable';

/** A request to the running plugin that failed; detail says why, for a message. */
export class ControlError extends Error {
  override readonly name = 'ControlError';

  constructor(
    readonly failure: ControlFailure,
    readonly detail: string,
    /** The socket asked. */
    readonly socketPath: string,
  ) {
    super(`${failure}: ${detail} (${socketPath})`);
  }

  get errorKind(): ErrorKind {
    return 'CERT_CSI_PLUGIN_CALL_FAILED';
  }
}

/** How long a request may take, from connecting to the end of the answer. */
export interface ControlCall {
  timeoutMs: number;
}

/**
 * Asks the plugin of the data root to renew target now; onProgress gets each volume as it
 * finishes. Resolves with every volume's outcome; throws ControlError.
 */
export async function askRenew(
  dataRoot: DataRoot,
  target: RenewTarget,
  call: ControlCall & { onProgress?: (done: RenewOutcome) => void },
): Promise<RenewOutcome> {
  const outcome: RenewOutcome = { renewed: [], failed: [] };
  await exchange(dataRoot, { op: 'renew', target }, call.timeoutMs, (line) => {
    const done: RenewOutcome = { renewed: [], failed: [] };
    if (line.type === 'renewed') {
      const { type: _, ...volume } = line;
      done.renewed.push(volume);
    } else if (line.type === 'failed') {
      const { type: _, ...volume } = line;
      done.failed.push(volume);
    } else {
      throw unexpected(line);
    }
    outcome.renewed.push(...done.renewed);
    outcome.failed.push(...done.failed);
    call.onProgress?.(done);
  });
  return outcome;
}

/** Asks the plugin to mark a Certificate of its store for issuance now; throws ControlError. */
export async function askCertificateRenew(
  dataRoot: DataRoot,
  certificate: NamespacedName,
  call: ControlCall,
): Promise<CertificateTriggered> {
  const triggered: CertificateTriggered[] = [];
  await exchange(dataRoot, { op: 'renew-certificate', certificate }, call.timeoutMs, (line) => {
    if (line.type !== 'triggered' || triggered.length > 0) throw unexpected(line);
    const { type: _, ...marked } = line;
    triggered.push(marked);
  });
  const [marked] = triggered;
  if (!marked) {
    throw new ControlError('unreadable', 'it names no Certificate', controlSocketOf(dataRoot));
  }
  return marked;
}

/** Asks the plugin to write a decision on a CertificateRequest of its store; throws ControlError. */
export async function askRequestDecision(
  dataRoot: DataRoot,
  decision: RequestDecisionAsked,
  call: ControlCall,
): Promise<void> {
  await exchange(dataRoot, { op: 'decide-request', decision }, call.timeoutMs, (line) => {
    throw unexpected(line);
  });
}

/**
 * What the plugin holds in memory: the failures metadata.json could not take, and the volumes
 * whose renewal on request is not finished; throws ControlError.
 */
export async function askStatus(dataRoot: DataRoot, call: ControlCall): Promise<PluginStatus> {
  const status: PluginStatus = { unsaved: [], renewalsAsked: [] };
  await exchange(dataRoot, { op: 'status' }, call.timeoutMs, (line) => {
    if (line.type === 'renewal-asked') {
      status.renewalsAsked.push(line.volumeId);
    } else if (line.type === 'unsaved') {
      const { type: _, ...failure } = line;
      status.unsaved.push(failure);
    } else {
      throw unexpected(line);
    }
  });
  return status;
}

function unexpected(line: AnswerLine): Error {
  return new Error(`a ${line.type} line is no answer to this request`);
}

/**
 * Sends request and hands each item line of the answer to onItem (which throws on one it does
 * not expect); resolves at "done". Only a socket at the name is asked: a link to one elsewhere
 * is not, and nothing else is waited on.
 */
async function exchange(
  dataRoot: DataRoot,
  request: ControlRequest,
  timeoutMs: number,
  onItem: (line: AnswerLine) => void,
): Promise<void> {
  const path = controlSocketOf(dataRoot);
  const fail = (failure: ControlFailure, detail: string) => new ControlError(failure, detail, path);
  const stats = await lstat(path).catch((err: unknown) => {
    throw fail('no-plugin', errnoText(err));
  });
  if (!stats.isSocket()) throw fail('no-plugin', `${fileKind(stats)} is there, not a socket`);
  const address = socketAddress(path);
  return new Promise<void>((resolve, reject) => {
    const lines = new LineBuffer(ANSWER_LINE_MAX_BYTES);
    let connected = false;
    let accepted = false;
    let received = 0;
    let settled = false;
    const finish = (err?: ControlError): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      socket.destroy();
      address.release();
      if (err) reject(err);
      else resolve();
    };
    // Referenced: the command waits for it whatever else is going on.
    const deadline = setTimeout(
      () => finish(fail(accepted ? 'late' : 'no-answer', `no answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const socket = connect(address.address, () => {
      connected = true;
      socket.write(formatControlRequest(request));
    });
    socket.on('error', (err) => {
      finish(connected ? fail('lost', errorMessage(err)) : fail('no-plugin', errnoText(err)));
    });
    socket.on('close', () =>
      finish(fail('lost', 'the plugin closed the connection before its answer was complete')),
    );
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
      try {
        if (received > ANSWER_MAX_BYTES) {
          throw new Error(`it is larger than ${byteSizeText(ANSWER_MAX_BYTES)}, the most read`);
        }
        for (const text of lines.push(chunk)) {
          if (settled) return;
          const line = parseAnswerLine(text);
          if (line.type === 'accepted') accepted = true;
          else if (line.type === 'done') finish();
          else if (line.type === 'error') finish(fail('refused', line.error));
          else onItem(line);
        }
      } catch (err) {
        finish(fail('unreadable', errorMessage(err)));
      }
    });
  });
}

// Why nothing answers at the socket, in words.
function errnoText(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no socket there';
  if (code === 'ECONNREFUSED')
    return 'nothing listens on the socket (left by a plugin that stopped)';
  return errorMessage(err);
}
