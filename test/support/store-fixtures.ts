import type { KubeObject, ResourceKind } from '../../src/api/meta.js';

/** A namespaced CRD-like kind with a status subresource. */
export const WidgetKind: ResourceKind = {
  group: 'example.cert-csi.io',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  namespaced: true,
};

/** A cluster-scoped kind. */
export const GadgetKind: ResourceKind = {
  group: 'example.cert-csi.io',
  version: 'v1',
  kind: 'Gadget',
  plural: 'gadgets',
  namespaced: false,
};

/** A core-group kind, like Secret. */
export const ThingKind: ResourceKind = {
  group: '',
  version: 'v1',
  kind: 'Thing',
  plural: 'things',
  namespaced: true,
};

export interface Widget extends KubeObject {
  spec?: { size?: number; colour?: string };
  status?: { phase?: string; count?: number };
}

export interface Thing extends KubeObject {
  data?: Record<string, string>;
}

/** A Widget with the given name, namespace and fields. */
export function widget(
  name: string,
  namespace: string | undefined = 'default',
  extra: Partial<Widget> = {},
): Widget {
  return {
    apiVersion: 'example.cert-csi.io/v1',
    kind: 'Widget',
    ...extra,
    metadata: { name, ...(namespace ? { namespace } : {}), ...extra.metadata },
  };
}

/** A Gadget (cluster-scoped). */
export function gadget(name: string): KubeObject {
  return { apiVersion: 'example.cert-csi.io/v1', kind: 'Gadget', metadata: { name } };
}

/** Lets every queued microtask and immediate run (not a timed sleep). */
export function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
