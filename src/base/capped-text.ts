/** A refusal or error message is cut to this many UTF-8 bytes (the note included). */
export const MESSAGE_LIMIT_BYTES = 16 * 1024;

/** The note that ends a cut text: how many bytes were left out. */
function cutNote(leftOut: number): string {
  return `…(${leftOut} more bytes left out)`;
}

/**
 * text itself when its UTF-8 form fits in maxBytes; else its longest head that fits together
 * with a note saying how many bytes were left out. The cut falls between characters: never
 * inside a UTF-8 sequence, so never inside a surrogate pair either.
 */
export function cappedText(text: string, maxBytes = MESSAGE_LIMIT_BYTES): string {
  // A UTF-16 unit is at most 3 UTF-8 bytes: short texts need no encoding to be known to fit.
  if (text.length * 3 <= maxBytes) return text;
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  // The note's length depends on the count it holds; the longest count is the whole text.
  let end = Math.max(0, maxBytes - Buffer.byteLength(cutNote(bytes.length)));
  // Back over continuation bytes (10xxxxxx) to the start of the character being cut.
  while (end > 0 && ((bytes[end] as number) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8') + cutNote(bytes.length - end);
}
