import {
  type CallOptions,
  type Client,
  credentials,
  type Metadata,
  type ServiceError,
  type StatusObject,
  status,
} from '@grpc/grpc-js';
import { loadCsiPackage } from './csi-proto.js';
import { type Endpoint, grpcAddress } from './endpoint.js';

type Unary = (
  request: object,
  options: CallOptions,
  callback: (err: ServiceError | null, response: unknown) => void,
) => { on(event: 'status', listener: (status: StatusObject) => void): unknown };

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

  /** Calls a Node RPC by name; resolves with the response and the plugin's trailing metadata. */
  async nodeCallWithTrailers<T = Record<string, unknown>>(
    method: string,
    request: object = {},
    options: CsiCallOptions = {},
  ): Promise<{ response: T; trailers: Metadata }> {
    return callWithTrailers<T>(this.node, method, request, options);
  }

  /** Closes both channels. */
  close(): void {
    this.identity.close();
    this.node.close();
  }
}

async function call<T>(
  client: Client,
  method: string,
  request: object,
  options: CsiCallOptions,
): Promise<T> {
  return (await callWithTrailers<T>(client, method, request, options)).response;
}

function callWithTrailers<T>(
  client: Client,
  method: string,
  request: object,
  options: CsiCallOptions,
): Promise<{ response: T; trailers: Metadata }> {
  const fn = (client as unknown as Record<string, Unary | undefined>)[method];
  if (typeof fn !== 'function') return Promise.reject(new Error(`unknown RPC ${method}`));
  // grpc-js arms a referenced timer for the deadline and ends the call with DEADLINE_EXCEEDED,
  // whether or not the server or the connection ever answers.
  const callOptions: CallOptions =
    options.timeoutMs === undefined ? {} : { deadline: Date.now() + options.timeoutMs };
  return new Promise((resolve, reject) => {
    let response: unknown;
    // grpc-js calls the callback, then emits the status (with the trailers) in the same tick.
    const unary = fn.call(client, request, callOptions, (err, answer) => {
      if (err) reject(err);
      else response = answer;
    });
    // After a failure (the callback rejected) resolving changes nothing.
    unary.on('status', (ended) => {
      if (ended.code === status.OK) resolve({ response: response as T, trailers: ended.metadata });
    });
  });
}
