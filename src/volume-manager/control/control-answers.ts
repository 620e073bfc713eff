import { quoted } from '../../api/echoed-value.js';
import { errorMessage } from '../../base/error-message.js';
import {
  type CertificateTriggered,
  type FailedVolume,
  isFields,
  type RenewedVolume,
  type UnsavedFailure,
} from './control-protocol.js';

// The lines the plugin answers a request with (see control-protocol.ts), each one JSON object
// with a "type".

/** One line of the plugin's answer. */
export type AnswerLine =
  /** The plugin took the request; what follows comes as the work is done. */
  | { type: 'accepted' }
  | ({ type: 'renewed' } & RenewedVolume)
  | ({ type: 'failed' } & FailedVolume)
  | ({ type: 'triggered' } & CertificateTriggered)
  | ({ type: 'unsaved' } & UnsavedFailure)
  /** A volume whose renewal on request is asked for and not finished yet. */
  | { type: 'renewal-asked'; volumeId: string }
  /** The answer is complete. */
  | { type: 'done' }
  /** The request was refused or failed as a whole; the plugin closes the connection. */
  | { type: 'error'; error: string };

/**
 * The longest text of an answer (an error message): a longer one is cut, so that a line stays
 * far below ANSWER_LINE_MAX_BYTES whatever a handler reports.
 */
export const ANSWER_TEXT_MAX_CHARS = 16 * 1024;

/** The largest answer line the CLI reads, newline excluded. */
export const ANSWER_LINE_MAX_BYTES = 1024 * 1024;

/** The most the CLI reads of one answer: a line per volume of the node, with its error. */
export const ANSWER_MAX_BYTES = 64 * 1024 * 1024;

// At most ANSWER_TEXT_MAX_CHARS code units, without splitting a surrogate pair, marked by "…".
function clip(value: unknown): string {
  const text = String(value);
  if (text.length <= ANSWER_TEXT_MAX_CHARS) return text;
  let end = ANSWER_TEXT_MAX_CHARS;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

/**
 * The line for an answer: only the known fields, each a string cut to ANSWER_TEXT_MAX_CHARS,
 * so nothing else a handler returns (a key, a whole metadata object) reaches the socket.
 */
export function formatAnswerLine(line: AnswerLine): string {
  return `${JSON.stringify(cleanLine(line))}\n`;
}

function cleanLine(line: AnswerLine): AnswerLine {
  switch (line.type) {
    case 'accepted':
    case 'done':
      return { type: line.type };
    case 'error':
      return { type: line.type, error: clip(line.error) };
    case 'renewed': {
      const next = line.nextIssuanceTime;
      return {
        type: line.type,
        volumeId: clip(line.volumeId),
        notAfter: clip(line.notAfter),
        ...(next === undefined ? {} : { nextIssuanceTime: clip(next) }),
      };
    }
    case 'failed':
      return { type: line.type, volumeId: clip(line.volumeId), error: clip(line.error) };
    case 'renewal-asked':
      return { type: line.type, volumeId: clip(line.volumeId) };
    case 'triggered':
      return {
        type: line.type,
        namespace: clip(line.namespace),
        name: clip(line.name),
        alreadyIssuing: line.alreadyIssuing === true,
      };
    case 'unsaved':
      return {
        type: line.type,
        volumeId: clip(line.volumeId),
        saveError: clip(line.saveError),
        lastError: { message: clip(line.lastError.message), time: clip(line.lastError.time) },
      };
  }
}

type Fields = Record<string, unknown>;

function text(obj: Fields, key: string, where: string): string {
  const v = obj[key];
  if (typeof v !== 'string') throw new Error(`${where}: ${key} must be a string`);
  return v;
}

/** Parses an answer line; throws an Error saying what is wrong. */
export function parseAnswerLine(line: string): AnswerLine {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    throw new Error(`not JSON: ${errorMessage(err)}`);
  }
  if (!isFields(value)) throw new Error('not a JSON object');
  const { type } = value;
  switch (type) {
    case 'accepted':
    case 'done':
      return { type };
    case 'error':
      return { type, error: text(value, 'error', type) };
    case 'renewed': {
      const renewed = {
        type,
        volumeId: text(value, 'volumeId', type),
        notAfter: text(value, 'notAfter', type),
      };
      return value.nextIssuanceTime === undefined
        ? renewed
        : { ...renewed, nextIssuanceTime: text(value, 'nextIssuanceTime', type) };
    }
    case 'failed':
      return { type, volumeId: text(value, 'volumeId', type), error: text(value, 'error', type) };
    case 'renewal-asked':
      return { type, volumeId: text(value, 'volumeId', type) };
    case 'triggered': {
      if (typeof value.alreadyIssuing !== 'boolean') {
        throw new Error('triggered: alreadyIssuing must be true or false');
      }
      return {
        type,
        namespace: text(value, 'namespace', type),
        name: text(value, 'name', type),
        alreadyIssuing: value.alreadyIssuing,
      };
    }
    case 'unsaved': {
      const lastError = value.lastError;
      if (!isFields(lastError)) throw new Error('unsaved: lastError must be an object');
      return {
        type,
        volumeId: text(value, 'volumeId', type),
        saveError: text(value, 'saveError', type),
        lastError: {
          message: text(lastError, 'message', 'unsaved lastError'),
          time: text(lastError, 'time', 'unsaved lastError'),
        },
      };
    }
    default:
      throw new Error(
        `${typeof type === 'string' ? `type ${quoted(type)}` : 'type missing or not a string'}: not an answer`,
      );
  }
}
