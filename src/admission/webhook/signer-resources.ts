import { type Clock, systemClock } from '../../base/clock.js';

/** One resource a server's discovery lists for a group and version (metav1.APIResource, the parts used). */
export interface DiscoveredResource {
  /** The plural name; subresources are `<plural>/<subresource>`. */
  name: string;
  kind: string;
  namespaced: boolean;
}

/** What the webhook asks an API server's discovery. */
export interface ApiDiscovery {
  /** The versions served of group, preferred first; undefined when the server serves no such group. */
  groupVersions(group: string): Promise<readonly string[] | undefined>;
  /** The resources served in group/version. */
  resources(group: string, version: string): Promise<readonly DiscoveredResource[]>;
}

/** An issuer kind's resource: `signerResource` is `<plural>.<group>`, the prefix of its signer names. */
export interface SignerResource {
  signerResource: string;
  namespaced: boolean;
}

/** How long "the group exists but has no such kind" is remembered (cert-manager's webhook). */
export const NEGATIVE_CACHE_MS = 30_000;

/**
 * Resolves an issuerRef's group and kind to its API resource through discovery, as
 * cert-manager's approval plugin does: a resource found is remembered for good (a kind does
 * not change its plural or scope); "no such kind in a group that exists" is remembered for
 * NEGATIVE_CACHE_MS, so CertificateRequests naming a missing issuer kind do not query
 * discovery on every approval; a group the server does not serve is asked again every time
 * (its CRD may be installed any moment). A discovery failure rejects, and is not remembered.
 */
export class SignerResourceResolver {
  private readonly found = new Map<string, SignerResource>();
  private readonly missingUntil = new Map<string, number>();

  constructor(
    private readonly discovery: ApiDiscovery,
    private readonly clock: Pick<Clock, 'now'> = systemClock,
  ) {}

  /** The resource of kind in group, or undefined when the server serves none. */
  async resolve(group: string, kind: string): Promise<SignerResource | undefined> {
    const key = `${kind}.${group}`;
    const known = this.found.get(key);
    if (known) return known;
    const missingUntil = this.missingUntil.get(key);
    if (missingUntil !== undefined && this.clock.now() < missingUntil) return undefined;
    this.missingUntil.delete(key);
    const versions = await this.discovery.groupVersions(group);
    if (versions === undefined) return undefined;
    for (const version of versions) {
      const resources = await this.discovery.resources(group, version);
      // Subresources (`issuers/status`) carry their parent's kind: only the resource itself counts.
      const match = resources.find((r) => r.kind === kind && !r.name.includes('/'));
      if (match) {
        const resource = { signerResource: `${match.name}.${group}`, namespaced: match.namespaced };
        this.found.set(key, resource);
        return resource;
      }
    }
    this.missingUntil.set(key, this.clock.now() + NEGATIVE_CACHE_MS);
    return undefined;
  }
}
