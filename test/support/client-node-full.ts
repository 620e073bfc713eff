import { createRequire } from 'node:module';
import type * as ClientNode from '@kubernetes/client-node';
import { ApiException } from '../../src/store/kubernetes/client-node.js';

/**
 * The whole @kubernetes/client-node package, for tests that drive the fake API server with API
 * groups the product never calls (CertificatesV1Api, CoordinationV1Api, informers...). The
 * product loads only the classes it uses, from the build's bundle
 * (src/store/kubernetes/client-node.ts); loaded with require() for the reason given there.
 */
export const clientNode: typeof ClientNode = createRequire(import.meta.url)(
  '@kubernetes/client-node',
);

/**
 * Whether err is a client-node ApiException, from the product's client (the build's bundle) or a
 * test's whole-package client: two different classes.
 */
export function isApiException(err: unknown): err is ClientNode.ApiException<unknown> {
  return err instanceof clientNode.ApiException || err instanceof ApiException;
}
