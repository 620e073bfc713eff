import type { ConfigurationOptions } from '@kubernetes/client-node';
import { type Clock, systemClock } from '../../base/clock.js';
import { StoreError } from '../errors.js';
import { callWithin, DEFAULT_REQUEST_TIMEOUT_MS } from './api-call.js';
import { ApisApi, CustomObjectsApi, type KubeConfig } from './client-node.js';

/** One served resource of a group version, as discovery lists it. */
export interface ServedResource {
  /** Plural name; a subresource is `<plural>/<subresource>`. */
  name: string;
  kind: string;
  namespaced: boolean;
}

/**
 * The API server's discovery documents through client-node: the groups it serves (`/apis`) and
 * the resources of one group version (`/apis/<group>/<version>`). Every request is cancelled
 * after requestTimeoutMs and fails as a StoreError, as KubernetesStore's requests do. Any
 * authenticated user may read discovery (the default system:discovery role): no RBAC rule
 * is needed.
 */
export class KubernetesDiscovery {
  private readonly apis: ApisApi;
  private readonly custom: CustomObjectsApi;

  constructor(
    kubeConfig: KubeConfig,
    private readonly requestTimeoutMs = DEFAULT_REQUEST_TIMEOUT_MS,
    private readonly clock: Clock = systemClock,
  ) {
    this.apis = kubeConfig.makeApiClient(ApisApi);
    this.custom = kubeConfig.makeApiClient(CustomObjectsApi);
  }

  /**
   * The versions served of group, in the server's order (preferred first), as cert-manager
   * walks them; undefined when the server serves no such group.
   */
  async groupVersions(group: string): Promise<string[] | undefined> {
    const list = await this.call('list API groups', (options) =>
      this.apis.getAPIVersions({}, options),
    );
    return list.groups.find((g) => g.name === group)?.versions.map((v) => v.version);
  }

  /** The resources served in group/version (none when the server does not serve it). */
  async resources(group: string, version: string): Promise<ServedResource[]> {
    try {
      const list = await this.call(`list resources of ${group}/${version}`, (options) =>
        this.custom.getAPIResources({ group, version }, options),
      );
      return list.resources.map((r) => ({ name: r.name, kind: r.kind, namespaced: r.namespaced }));
    } catch (err) {
      // The group version went away between the two requests.
      if (err instanceof StoreError && err.reason === 'NotFound') return [];
      throw err;
    }
  }

  private call<R>(
    what: string,
    request: (options: ConfigurationOptions) => Promise<R>,
  ): Promise<R> {
    return callWithin(this.clock, this.requestTimeoutMs, what, request);
  }
}
