import type { ResourceKind } from '../../api/meta.js';

// Which version of a kind to speak to a cluster, and how soon to ask discovery again: pure, so
// the policy reads in one place and is table-tested.

/** The versions cert-csi can speak of kind, preferred first. */
export function wantedVersions(kind: ResourceKind): readonly string[] {
  return kind.versions ?? [kind.version];
}

/**
 * The version to use: the first of wanted (preferred first) that the server serves the
 * resource in; undefined when it serves none of them.
 */
export function chooseServedVersion(
  wanted: readonly string[],
  served: readonly string[],
): string | undefined {
  return wanted.find((version) => served.includes(version));
}

/**
 * How long after a discovery check the next one may run: base after a check that changed the
 * version (or the first), doubling with each check in a row that changed nothing, up to max. A
 * client whose requests keep answering "not served" therefore asks discovery less and less often.
 */
export function rediscoveryDelayMs(unchangedChecks: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.min(unchangedChecks, 30));
}
