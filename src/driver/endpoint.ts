import { isAbsolute, resolve } from 'node:path';

/** A parsed `--endpoint`: a unix socket path or a TCP address. */
export type Endpoint = { kind: 'unix'; path: string } | { kind: 'tcp'; address: string };

/**
 * Parses `unix:///abs/csi.sock`, `unix://relative/csi.sock` (relative to cwd) or
 * `tcp://host:port`; anything else is an error naming the value.
 */
export function parseEndpoint(text: string): Endpoint {
  const match = /^(unix|tcp):\/\/(.+)$/i.exec(text);
  const scheme = match?.[1]?.toLowerCase();
  const rest = match?.[2];
  if (!scheme || !rest) {
    throw new Error(`invalid endpoint "${text}": expected unix://PATH or tcp://HOST:PORT`);
  }
  if (scheme === 'unix') return { kind: 'unix', path: isAbsolute(rest) ? rest : resolve(rest) };
  if (!/^[^:/]+:\d+$|^\[[0-9a-fA-F:]+\]:\d+$/.test(rest)) {
    throw new Error(`invalid endpoint "${text}": expected tcp://HOST:PORT`);
  }
  return { kind: 'tcp', address: rest };
}

/** The address grpc-js binds or dials for an endpoint. */
export function grpcAddress(endpoint: Endpoint): string {
  return endpoint.kind === 'unix' ? `unix://${endpoint.path}` : endpoint.address;
}
