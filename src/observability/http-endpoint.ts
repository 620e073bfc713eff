import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../api/logger.js';
import { errorMessage } from '../base/error-message.js';
import { requestPath } from '../base/request-path.js';
import { type BindAddress, formatAddress } from './bind-address.js';

/** The answer of a route: status, content type and body. */
export interface RouteAnswer {
  status: number;
  contentType: string;
  body: string;
}

/** A GET route: path to the function that answers it. */
export type Routes = ReadonlyMap<string, () => RouteAnswer | Promise<RouteAnswer>>;

/** A listening endpoint. */
export interface HttpEndpoint {
  /** The address it is bound to (the real port when asked for port 0). */
  address: AddressInfo;
  close(): Promise<void>;
}

/**
 * Serves routes over plain HTTP on address: GET (and HEAD) of a listed path answers, any other
 * path is 404, any other method 405; a route that throws answers 500 with its message. Logs
 * the bound address (the real one when the port was 0).
 */
export async function startHttpEndpoint(
  name: string,
  address: BindAddress,
  routes: Routes,
  logger: Logger,
): Promise<HttpEndpoint> {
  const server = createServer((request, response) => {
    void answer(routes, request, response);
  });
  await listen(server, address);
  const bound = server.address() as AddressInfo;
  logger.info(
    {
      endpoint: name,
      address: formatAddress(bound.address, bound.port),
      paths: [...routes.keys()],
    },
    'serving HTTP',
  );
  return {
    address: bound,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function answer(
  routes: Routes,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const path = requestPath(request.url);
  const route = path === undefined ? undefined : routes.get(path);
  let result: RouteAnswer;
  if (path === undefined) {
    result = plain(400, 'malformed request target\n');
  } else if (request.method !== 'GET' && request.method !== 'HEAD') {
    result = plain(405, `method ${request.method} not allowed\n`);
    response.setHeader('allow', 'GET, HEAD');
  } else if (!route) {
    result = plain(404, `no such path: ${path.slice(0, 100)}\n`);
  } else {
    try {
      result = await route();
    } catch (err) {
      result = plain(500, `${errorMessage(err)}\n`);
    }
  }
  response.writeHead(result.status, { 'content-type': result.contentType });
  response.end(request.method === 'HEAD' ? undefined : result.body);
}

/** A plain-text answer. */
export function plain(status: number, body: string): RouteAnswer {
  return { status, contentType: 'text/plain; charset=utf-8', body };
}

function listen(server: Server, address: BindAddress): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host || undefined, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
