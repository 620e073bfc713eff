import { PkiError } from './errors.js';

/** One PEM block: its label and DER bytes. */
export interface PemBlock {
  label: string;
  der: Uint8Array;
}

const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END ([A-Z0-9 ]+)-----/g;

/** Decodes every PEM block in text; text outside blocks is ignored, like Go's pem.Decode. */
export function decodePemBlocks(text: string): PemBlock[] {
  const blocks: PemBlock[] = [];
  for (const m of text.matchAll(BLOCK)) {
    const [, label = '', body = '', endLabel = ''] = m;
    if (label !== endLabel) throw new PkiError(`PEM block "${label}" ends with "${endLabel}"`);
    // Headers (RFC 1421 "Proc-Type:" lines) mark encrypted legacy keys, which we do not accept.
    if (body.includes(':')) throw new PkiError(`PEM block "${label}" has headers`);
    const b64 = body.replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64) || b64.length % 4 !== 0) {
      throw new PkiError(`PEM block "${label}" is not valid base64`);
    }
    blocks.push({ label, der: new Uint8Array(Buffer.from(b64, 'base64')) });
  }
  return blocks;
}

/** Encodes DER as one PEM block with 64-character lines and a trailing newline, like Go's pem.Encode. */
export function encodePem(label: string, der: Uint8Array): string {
  const b64 = Buffer.from(der).toString('base64');
  let body = '';
  for (let i = 0; i < b64.length; i += 64) body += `${b64.slice(i, i + 64)}\n`;
  return `-----BEGIN ${label}-----\n${body}-----END ${label}-----\n`;
}

/** Normalises string-or-Buffer input to text. */
export function pemText(input: string | Uint8Array): string {
  return typeof input === 'string' ? input : Buffer.from(input).toString('latin1');
}

/** One block as Go's pem.Decode returns it: label, headers (RFC 1421 `Key: value` lines) and bytes. */
export interface GoPemBlock {
  label: string;
  headers: Record<string, string>;
  der: Uint8Array;
}

const PEM_START = '\n-----BEGIN ';
const PEM_END = '\n-----END ';
const PEM_END_OF_LINE = '-----';
// encoding/base64.StdEncoding: padded, CR and LF ignored (pem.Decode removes spaces and tabs).
const STD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** True for padded standard base64 without whitespace (Go's base64.StdEncoding, strict). */
export function isStandardBase64(text: string): boolean {
  return STD_BASE64.test(text);
}

/** Go's getLine: the line up to LF without trailing spaces, tabs and CR, and what follows the LF. */
function goLine(text: string): [string, string] {
  const lf = text.indexOf('\n');
  const line = lf < 0 ? text : text.slice(0, lf);
  return [line.replace(/[ \t\r]+$/, ''), lf < 0 ? '' : text.slice(lf + 1)];
}

/**
 * Every block Go's pem.Decode finds in text, in order, calling it until it finds no more:
 * text outside blocks is skipped, and so is a block Go cannot decode (bad END line, bad
 * base64). Unlike decodePemBlocks it keeps headers and never throws, so a validator can
 * say which entry is wrong, as the API server's validation does.
 */
export function decodeGoPemBlocks(text: string): GoPemBlock[] {
  const blocks: GoPemBlock[] = [];
  let rest = text;
  for (;;) {
    const found = nextGoPemBlock(rest);
    if (!found) return blocks;
    blocks.push(found.block);
    rest = found.rest;
  }
}

function nextGoPemBlock(data: string): { block: GoPemBlock; rest: string } | undefined {
  let rest = data;
  for (;;) {
    // The BEGIN line starts the text or follows a newline.
    if (rest.startsWith(PEM_START.slice(1))) rest = rest.slice(PEM_START.length - 1);
    else {
      const at = rest.indexOf(PEM_START);
      if (at < 0) return undefined;
      rest = rest.slice(at + PEM_START.length);
    }
    let typeLine: string;
    [typeLine, rest] = goLine(rest);
    if (!typeLine.endsWith(PEM_END_OF_LINE)) continue;
    const label = typeLine.slice(0, -PEM_END_OF_LINE.length);
    const headers: Record<string, string> = {};
    let truncated = false;
    for (;;) {
      if (rest === '') {
        truncated = true;
        break;
      }
      const [line, next] = goLine(rest);
      const colon = line.indexOf(':');
      if (colon < 0) break;
      headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
      rest = next;
    }
    // Go gives up on the whole input here, not just on this block.
    if (truncated) return undefined;
    let endIndex: number;
    let trailerIndex: number;
    if (Object.keys(headers).length === 0 && rest.startsWith(PEM_END.slice(1))) {
      endIndex = 0;
      trailerIndex = PEM_END.length - 1;
    } else {
      endIndex = rest.indexOf(PEM_END);
      trailerIndex = endIndex + PEM_END.length;
    }
    if (endIndex < 0) continue;
    const trailer = rest.slice(trailerIndex, trailerIndex + label.length + PEM_END_OF_LINE.length);
    if (trailer !== `${label}${PEM_END_OF_LINE}`) continue;
    const [restOfEndLine] = goLine(
      rest.slice(trailerIndex + label.length + PEM_END_OF_LINE.length),
    );
    if (restOfEndLine !== '') continue;
    const base64 = rest.slice(0, endIndex).replace(/[ \t\r\n]/g, '');
    if (!isStandardBase64(base64)) continue;
    const [, after] = goLine(rest.slice(endIndex + PEM_END.length - 1));
    return {
      block: { label, headers, der: new Uint8Array(Buffer.from(base64, 'base64')) },
      rest: after,
    };
  }
}
