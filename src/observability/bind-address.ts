import { quoted } from '../api/echoed-value.js';

/** Where an HTTP endpoint listens; host empty means every interface. */
export interface BindAddress {
  host: string;
  port: number;
}

/**
 * A `--*-bind-address` value as controller-runtime reads it: `0` disables the endpoint
 * (undefined), else `host:port`, `:port` or `[v6]:port` with a port from 0 (any free port) to
 * 65535. Throws naming the flag.
 */
export function parseBindAddress(flag: string, text: string): BindAddress | undefined {
  if (text === '0') return undefined;
  const match = /^(?:\[([^\]]*)\]|([^:[\]]*)):(\d{1,5})$/.exec(text);
  const port = Number(match?.[3]);
  if (!match || port > 65535) {
    throw new Error(
      `${flag}: expected host:port (e.g. ":9402") or 0 to disable, got ${quoted(text)}`,
    );
  }
  // One of the two host groups matched: the bracketed one or the plain one (maybe empty).
  return { host: match[1] ?? (match[2] as string), port };
}

/** An address as `host:port` (`[v6]:port`), for logs. */
export function formatAddress(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
