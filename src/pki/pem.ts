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
