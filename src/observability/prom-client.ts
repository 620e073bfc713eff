import { createRequire } from 'node:module';
import type * as PromClient from 'prom-client';

// prom-client, and @opentelemetry/api which it loads, cost ~0.1 s of CPU to load, and a
// process that serves no metrics (the default, --metrics-bind-address=0) never uses them: the
// metrics modules ask for it here when they register their families, so a start without
// metrics never loads it. It is a CommonJS package: require() gives the very module an ES
// import would (one module cache), synchronously.
let loaded: typeof PromClient | undefined;

/** prom-client, loaded at the first call. */
export function promClient(): typeof PromClient {
  loaded ??= createRequire(import.meta.url)('prom-client') as typeof PromClient;
  return loaded;
}
