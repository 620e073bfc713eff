import type { KubeObject, ResourceKind } from '../../src/api/meta.js';
import type { ListOptions, ResourceStore } from '../../src/store/resource-store.js';

/**
 * Resolves with the object once `predicate` holds, learning of changes through a watch
 * (no polling). Rejects after timeoutMs with the last state seen, so a failing test says why,
 * or at once when signal aborts.
 */
export async function waitForObject<T extends KubeObject>(
  store: ResourceStore,
  kind: ResourceKind,
  name: string,
  namespace: string | undefined,
  predicate: (obj: T) => boolean,
  timeoutMs = 10_000,
  signal?: AbortSignal,
): Promise<T> {
  // List rather than get: its resourceVersion lets the watch start exactly where the
  // list ended, even when the object does not exist yet.
  const listed = await store.list<T>(kind, namespace ? { namespace } : {});
  let last = listed.items.find((item) => item.metadata.name === name);
  if (last && predicate(last)) return last;
  signal?.throwIfAborted();
  return await new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      watch.stop();
      reject(new Error(`stopped waiting for ${kind.kind} ${namespace ?? ''}/${name}`));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      watch.stop();
      reject(
        new Error(
          `timed out waiting for ${kind.kind} ${namespace ?? ''}/${name}; last seen: ${JSON.stringify(last?.['status' as keyof T] ?? last)}`,
        ),
      );
    }, timeoutMs);
    const watch = store.watch<T>(
      kind,
      {
        ...(namespace ? { namespace } : {}),
        resourceVersion: listed.resourceVersion,
      },
      {
        onEvent: (event) => {
          if (event.object.metadata.name !== name || event.type === 'DELETED') return;
          last = event.object;
          if (predicate(event.object)) {
            clearTimeout(timer);
            signal?.removeEventListener('abort', onAbort);
            watch.stop();
            resolve(event.object);
          }
        },
        onError: (err) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          reject(err);
        },
      },
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Resolves once no object of kind matches options (namespace, label and field selectors),
 * learning of deletions through a watch (no polling). Rejects after timeoutMs naming those
 * still there, or at once when signal aborts.
 */
export async function waitForNoObjects(
  store: ResourceStore,
  kind: ResourceKind,
  options: ListOptions,
  timeoutMs = 10_000,
  signal?: AbortSignal,
): Promise<void> {
  const listed = await store.list(kind, options);
  const left = new Set(listed.items.map((item) => item.metadata.name));
  if (left.size === 0) return;
  signal?.throwIfAborted();
  await new Promise<void>((resolve, reject) => {
    const end = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      watch.stop();
    };
    const onAbort = () => {
      end();
      reject(new Error(`stopped waiting for no ${kind.kind}`));
    };
    const timer = setTimeout(() => {
      end();
      reject(
        new Error(
          `timed out waiting for no ${kind.kind} in ${options.namespace ?? 'any namespace'} (${[options.labelSelector, options.fieldSelector].filter(Boolean).join(' ') || 'all'}); left: ${[...left].join(', ')}`,
        ),
      );
    }, timeoutMs);
    const watch = store.watch(
      kind,
      { ...options, resourceVersion: listed.resourceVersion },
      {
        onEvent: (event) => {
          if (event.type === 'DELETED') left.delete(event.object.metadata.name);
          else left.add(event.object.metadata.name);
          if (left.size > 0) return;
          end();
          resolve();
        },
        onError: (err) => {
          end();
          reject(err);
        },
      },
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
