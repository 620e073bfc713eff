import { type CallOptions, type Client, credentials, type ServiceError } from '@grpc/grpc-js';
import { loadCsiPackage } from './csi-proto.js';
import { type Endpoint, grpcAddress } from './endpoint.js';

type Unary = (
  request: object,
  options: CallOptions,
  callback: (err: ServiceError | null, response: unknown) => void,
) => void;

/** Options of one call. */
export interface CsiCallOptions {
  /** Ends the call with DEADLINE_EXCEEDED when no answer came within this many ms. */
  timeoutMs?: number;
}

/** A small promise-based CSI client for the CLI and the tests. */
export class CsiClient {
  private readonly identity: Client;
  private readonly node: Client;

  constructor(endpoint: Endpoint) {
    const csi = loadCsiPackage();
    const address = grpcAddress(endpoint);
    this.identity = new csi.Identity(address, credentials.createInsecure());
    this.node = new csi.Node(address, credentials.createInsecure());
  }

  /** Calls an Identity RPC by name. */
  identityCall<T = Record<string, unknown>>(
    method: string,
    request: object = {},
    options: CsiCallOptions = {},
  ): Promise<T> {
    return call<T>(this.identity, method, request, options);
  }

  /** Calls a Node RPC by name. */
  nodeCall<T = Record<string, unknown>>(
    method: string,
    request: object = {},
    options: CsiCallOptions = {},
  ): Promise<T> {
    return call<T>(this.node, method, request, options);
  }

  /** Closes both channels. */
  close(): void {
    this.identity.close();
    this.node.close();
  }
}

function call<T>(
  client: Client,
  method: string,
  request: object,
  options: CsiCallOptions,
): Promise<T> {
  const fn = (client as unknown as Record<string, Unary | undefined>)[method];
  if (typeof fn !== 'function') return Promise.reject(new Error(`unknown RPC ${method}`));
  // grpc-js arms a referenced timer for the deadline and ends the call with DEADLINE_EXCEEDED,
  // whether or not the server or the connection ever answers.
  const callOptions: CallOptions =
    options.timeoutMs === undefined ? {} : { deadline: Date.now() + options.timeoutMs };
  return new Promise<T>((resolve, reject) => {
    fn.call(client, request, callOptions, (err, response) =>
      err ? reject(err) : resolve(response as T),
    );
  });
}
