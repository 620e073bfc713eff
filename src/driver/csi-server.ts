import {
  type Metadata,
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type sendUnaryData,
  status,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import type { Logger } from '../api/logger.js';
import { errorMessage } from '../base/error-message.js';
import { loadCsiPackage } from './csi-proto.js';
import { type Endpoint, freeUnixEndpoint, grpcAddress } from './endpoint.js';
import { grpcStatusOf } from './grpc-status.js';
import { statusMessage } from './status-message.js';

/** One RPC's logic: the request message in, the response message out (or a thrown error). */
export type RpcHandler = (request: never) => Promise<object> | object;

/**
 * A response with trailing metadata: what the plugin tells a client that looks (the CLI)
 * beyond the CSI messages, which are fixed; a client that does not look (kubelet) sees the
 * plain response.
 */
export class AnswerWithTrailers {
  constructor(
    readonly response: object,
    readonly trailers: Metadata,
  ) {}
}

/** The handlers of one CSI service, by RPC name; missing RPCs answer Unimplemented. */
export type ServiceHandlers = Record<string, RpcHandler>;

/** A running CSI gRPC server. */
export interface CsiServer {
  /** Stops accepting calls and waits up to graceMs for running ones. */
  close(graceMs?: number): Promise<void>;
}

/**
 * Maps any error to the gRPC status a CSI client sees (grpcStatusOf, from its kind), its
 * message capped so that it always fits the trailers (see statusMessage).
 */
export function toGrpcError(err: unknown): { code: status; details: string } {
  return { code: grpcStatusOf(err), details: statusMessage(errorMessage(err)) };
}

function adapt(service: string, method: string, handler: RpcHandler | undefined, logger: Logger) {
  return (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
    if (!handler) {
      callback({ code: status.UNIMPLEMENTED, details: `${service}.${method} is not implemented` });
      return;
    }
    const request = call.request as { volume_id?: unknown };
    const volumeId = typeof request?.volume_id === 'string' ? request.volume_id : undefined;
    const started = performance.now();
    Promise.resolve()
      .then(() => handler(call.request as never))
      .then(
        (response) => {
          logger.debug(
            { rpc: method, volumeId, ms: Math.round(performance.now() - started) },
            'rpc completed',
          );
          if (response instanceof AnswerWithTrailers) {
            callback(null, response.response, response.trailers);
          } else {
            callback(null, response);
          }
        },
        (err: unknown) => {
          const mapped = toGrpcError(err);
          logger.warn(
            { rpc: method, volumeId, code: status[mapped.code], err: mapped.details },
            'rpc failed',
          );
          callback(mapped);
        },
      );
  };
}

function implementation(
  serviceName: string,
  methods: readonly string[],
  handlers: ServiceHandlers,
  logger: Logger,
): UntypedServiceImplementation {
  const impl: UntypedServiceImplementation = {};
  for (const method of methods) impl[method] = adapt(serviceName, method, handlers[method], logger);
  return impl;
}

/**
 * Serves the CSI Identity and Node services on the endpoint. A stale socket file from a
 * previous run is removed first (grpc-js fails with EADDRINUSE on it otherwise); a live socket
 * or anything that is not a socket is refused, never removed (freeUnixEndpoint).
 */
export async function startCsiServer(options: {
  endpoint: Endpoint;
  identity: ServiceHandlers;
  node: ServiceHandlers;
  logger: Logger;
}): Promise<CsiServer> {
  const csi = loadCsiPackage();
  const server = new Server();
  const identityMethods = Object.keys(csi.Identity.service);
  const nodeMethods = Object.keys(csi.Node.service);
  server.addService(
    csi.Identity.service,
    implementation('Identity', identityMethods, options.identity, options.logger),
  );
  server.addService(
    csi.Node.service,
    implementation('Node', nodeMethods, options.node, options.logger),
  );
  if (options.endpoint.kind === 'unix')
    await freeUnixEndpoint(options.endpoint.path, options.logger);
  await new Promise<number>((resolve, reject) => {
    server.bindAsync(
      grpcAddress(options.endpoint),
      ServerCredentials.createInsecure(),
      (err, port) =>
        err
          ? reject(new Error(`cannot listen on ${grpcAddress(options.endpoint)}: ${err.message}`))
          : resolve(port),
    );
  });
  return {
    close: (graceMs = 5000) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
}
