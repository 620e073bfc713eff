import { createRequire } from 'node:module';
import type * as ClientNode from '@kubernetes/client-node';

/**
 * @kubernetes/client-node, loaded with require() instead of import. Its index pulls in about 970
 * ES modules; Node 20 links those through the asynchronous ESM loader, and under a module hook
 * (tap's coverage hook, in every test process and every plugin or controller child they start)
 * each file is a round trip to the hook's thread. require() of ES modules (Node >= 20.19, our
 * floor) loads the same files synchronously into the same module cache, so a class is the same
 * class whichever way it was loaded. Measured on Node 20.20, 2 cores, three runs each: 630-700 ms
 * instead of 755-770 ms plain, 780-840 ms instead of 4.0-4.3 s under the hook.
 */
export const clientNode: typeof ClientNode = createRequire(import.meta.url)(
  '@kubernetes/client-node',
);

/** The classes the store, discovery and kubeconfig loading use, from the module above. */
export const { ApiException, ApisApi, CoreV1Api, CustomObjectsApi, KubeConfig, Observable, Watch } =
  clientNode;

export type ApiException<T> = ClientNode.ApiException<T>;
export type ApisApi = ClientNode.ApisApi;
export type CoreV1Api = ClientNode.CoreV1Api;
export type CustomObjectsApi = ClientNode.CustomObjectsApi;
export type KubeConfig = ClientNode.KubeConfig;
export type Observable<T> = ClientNode.Observable<T>;
export type Watch = ClientNode.Watch;
