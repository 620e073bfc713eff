/** The message of a thrown value, which may be anything: an Error's message, else its text. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A thrown value as an Error, wrapping anything else, so handlers can rely on `.message`. */
export function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

/** A message and its cause joined with ": ", as cert-manager's reporters write them. */
export function withCause(message: string, cause?: unknown): string {
  return cause === undefined ? message : `${message}: ${errorMessage(cause)}`;
}
