/**
 * The path of an HTTP request target, or undefined when no URL parser takes it (`http://[`).
 * A server handler that let `new URL` throw would end in an unhandled rejection, which stops
 * the process: anyone who can reach the port could stop it.
 */
export function requestPath(target: string | undefined): string | undefined {
  try {
    return new URL(target ?? '', 'http://server').pathname;
  } catch {
    return undefined;
  }
}
