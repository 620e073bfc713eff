/**
 * Most bytes a gRPC status message may take on the wire. The message travels percent-encoded
 * in the `grpc-message` trailer, and the peer refuses a header block above its metadata limit
 * (8 KiB in gRPC C-core, 64 KiB in Node's HTTP/2): the call then never completes and the
 * channel stalls. Half of the smallest limit leaves room for the other trailers.
 */
export const MAX_STATUS_MESSAGE_BYTES = 4096;

const REPLACEMENT = '\uFFFD';

/**
 * The message as the client may receive it: lone surrogates replaced (they cannot be encoded),
 * and, when its encoded form exceeds MAX_STATUS_MESSAGE_BYTES, shortened on a character
 * boundary with a marker saying how long it was.
 */
export function statusMessage(text: string): string {
  const chars = Array.from(text, (c) => (isLoneSurrogate(c) ? REPLACEMENT : c));
  let size = 0;
  for (const c of chars) size += encodedSize(c);
  if (size <= MAX_STATUS_MESSAGE_BYTES) return chars.join('');
  const marker = `… [message shortened, ${chars.length} characters in all]`;
  const budget = MAX_STATUS_MESSAGE_BYTES - encodedSize(marker);
  let kept = 0;
  let used = 0;
  for (const c of chars) {
    const cost = encodedSize(c);
    if (used + cost > budget) break;
    used += cost;
    kept += 1;
  }
  return `${chars.slice(0, kept).join('')}${marker}`;
}

// grpc-js sends the message through encodeURI: what it keeps costs a byte, anything else three
// per UTF-8 byte.
function encodedSize(text: string): number {
  return encodeURI(text).length;
}

function isLoneSurrogate(char: string): boolean {
  const code = char.charCodeAt(0);
  return char.length === 1 && code >= 0xd800 && code <= 0xdfff;
}
