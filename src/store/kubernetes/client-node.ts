import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type * as ClientNode from '@kubernetes/client-node';

/** The classes the store, discovery and kubeconfig loading use. */
type Used = Pick<
  typeof ClientNode,
  | 'ApiException'
  | 'ApisApi'
  | 'CoreV1Api'
  | 'CustomObjectsApi'
  | 'KubeConfig'
  | 'Observable'
  | 'Watch'
>;

/**
 * Where the classes come from. The build (`npm run build`, `npm run build:test`) writes
 * client-node.bundle.cjs beside this file with tools/bundle-client-node.sh: the pinned
 * @kubernetes/client-node cut down by esbuild to these classes and what they reach, as one
 * CommonJS file. The package's index is about 1,000 ES modules, most of them API groups we never
 * call; the bundle loads in 250-350 ms of CPU instead of 750-1,100 ms (Node 20.20, 2 cores), in
 * every process that starts a Kubernetes client. Run from the TypeScript sources (tsx, as the
 * benches are), there is no bundle and the package itself is loaded, with require(): Node 20
 * links it synchronously instead of through the asynchronous ESM loader.
 */
const bundle = fileURLToPath(new URL('./client-node.bundle.cjs', import.meta.url));
const loaded: Used = createRequire(import.meta.url)(
  existsSync(bundle) ? bundle : '@kubernetes/client-node',
);

export const { ApiException, ApisApi, CoreV1Api, CustomObjectsApi, KubeConfig, Observable, Watch } =
  loaded;

export type ApiException<T> = ClientNode.ApiException<T>;
export type ApisApi = ClientNode.ApisApi;
export type CoreV1Api = ClientNode.CoreV1Api;
export type CustomObjectsApi = ClientNode.CustomObjectsApi;
export type KubeConfig = ClientNode.KubeConfig;
export type Observable<T> = ClientNode.Observable<T>;
export type Watch = ClientNode.Watch;
