/** Identity service answers: plugin name and version, capabilities, readiness. */
export interface IdentityOptions {
  driverName: string;
  version: string;
  isReady: () => boolean;
}

/** GetPluginInfo: the driver name kubelet registers and the package version. */
export function pluginInfo(options: IdentityOptions): { name: string; vendor_version: string } {
  return { name: options.driverName, vendor_version: options.version };
}

/**
 * GetPluginCapabilities: none. There is no Controller service (inline ephemeral volumes
 * never need one), so, unlike csi-lib, it does not advertise CONTROLLER_SERVICE.
 */
export function pluginCapabilities(): { capabilities: never[] } {
  return { capabilities: [] };
}

/** Probe: ready only once the store and the controllers are started. */
export function probe(options: IdentityOptions): { ready: { value: boolean } } {
  return { ready: { value: options.isReady() } };
}
