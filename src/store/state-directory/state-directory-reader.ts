import { apiVersionOf, type KubeObject, type ResourceKind } from '../../api/meta.js';
import { StoreError } from '../errors.js';
import { checkName, checkNamespace, notFound } from '../object-rules.js';
import type { ListOptions, ListResult, ResourceStore } from '../resource-store.js';
import { StateDirectory } from './state-directory.js';

/**
 * The objects of an embedded plugin's state dir, read-only, behind the store's get and list:
 * for `cert-csi status --certificate`, which must not take the lock of the plugin owning the
 * dir. It reads the files the plugin wrote (each atomically), so it sees what was durable at
 * the time of each read; with the plugin stopped, what the next start will load.
 */
export class StateDirectoryReader implements Pick<ResourceStore, 'get' | 'list'> {
  private readonly dir: StateDirectory;

  constructor(root: string) {
    this.dir = new StateDirectory(root);
  }

  async get<T extends KubeObject>(
    kind: ResourceKind,
    name: string,
    namespace?: string,
  ): Promise<T> {
    // Checked before they become a path.
    const ns = checkNamespace(kind, namespace, true);
    checkName(kind, name);
    const object = await this.dir.readObject({
      group: kind.group,
      plural: kind.plural,
      namespace: ns,
      name,
    });
    if (!object) throw notFound(kind, ns, name);
    return withKind<T>(kind, object);
  }

  /** Lists one namespace, every namespace, or a cluster-scoped kind; no label or field selectors. */
  async list<T extends KubeObject>(
    kind: ResourceKind,
    options: ListOptions = {},
  ): Promise<ListResult<T>> {
    // Refused rather than ignored: a caller would take the whole list for the selection.
    if (options.labelSelector !== undefined) {
      throw new StoreError('Invalid', 'the state dir reader does not support label selectors');
    }
    if (options.fieldSelector !== undefined) {
      throw new StoreError('Invalid', 'the state dir reader does not support field selectors');
    }
    const { group, plural } = kind;
    if (kind.namespaced && !options.namespace) {
      // Every namespace, as the API server lists a namespaced kind without a namespace.
      const objects: KubeObject[] = [];
      for (const namespace of await this.dir.namespacesOf({ group, plural })) {
        objects.push(...(await this.dir.readObjects({ group, plural, namespace })));
      }
      return { items: objects.map((o) => withKind<T>(kind, o)), resourceVersion: '' };
    }
    const namespace = checkNamespace(kind, options.namespace, true);
    const objects = await this.dir.readObjects({ group, plural, namespace });
    return { items: objects.map((o) => withKind<T>(kind, o)), resourceVersion: '' };
  }
}

function withKind<T extends KubeObject>(kind: ResourceKind, object: KubeObject): T {
  return { ...object, apiVersion: apiVersionOf(kind), kind: kind.kind } as T;
}
