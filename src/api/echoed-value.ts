// A user's value can be megabytes long (a volume attribute, a path); gRPC carries a status
// message in its trailers, which have a size limit, and a log line should stay readable.
// Every error that echoes a value echoes at most this much of it.

/** At most this many characters of a value are echoed in an error message. */
export const ECHO_LIMIT = 100;

/** A value cut for an error message: its first ECHO_LIMIT characters, and `…(N characters)` when more were cut, else "". */
export interface EchoedValue {
  head: string;
  cut: string;
}

/** Cuts text to ECHO_LIMIT characters (code points, so no surrogate pair is split). */
export function echoParts(text: string): EchoedValue {
  if (text.length <= ECHO_LIMIT) return { head: text, cut: '' };
  let head = '';
  let count = 0;
  for (const ch of text) {
    if (count < ECHO_LIMIT) head += ch;
    count++;
  }
  return count <= ECHO_LIMIT ? { head, cut: '' } : { head, cut: `…(${count} characters)` };
}

/** text itself when short; else its first ECHO_LIMIT characters followed by `…(N characters)`. */
export function shortened(text: string): string {
  const { head, cut } = echoParts(text);
  return head + cut;
}

/** `"text"` (JSON string quoting), shortened as `shortened` does with the marker after the quote. */
export function quoted(text: string): string {
  const { head, cut } = echoParts(text);
  return JSON.stringify(head) + cut;
}
