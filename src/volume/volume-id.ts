import { VolumeError } from './errors.js';

/** Longest accepted volume id; kubelet's inline ids are 68 characters (`csi-` + 64 hex). */
export const MAX_VOLUME_ID_LENGTH = 128;

const SAFE = /^[A-Za-z0-9._-]+$/;

/** Throws VolumeError unless id is one safe path segment: 1-128 of [A-Za-z0-9._-], not `.`, `..` or `..`-prefixed. */
export function validateVolumeId(id: string): void {
  const shown = JSON.stringify(id.length > MAX_VOLUME_ID_LENGTH ? `${id.slice(0, 32)}…` : id);
  const fail = (why: string): never => {
    throw new VolumeError(`invalid volume id ${shown}: ${why}`);
  };
  if (id.length === 0) fail('it is empty');
  if (id.length > MAX_VOLUME_ID_LENGTH) {
    fail(`it is ${id.length} characters long, at most ${MAX_VOLUME_ID_LENGTH} are allowed`);
  }
  if (!SAFE.test(id)) fail('only letters, digits, ".", "_" and "-" are allowed');
  // `..`-prefixed names are the atomic writer's internal entries; `.` and `..` are not dirs of their own.
  if (id === '.' || id.startsWith('..')) fail('it must not be "." or start with ".."');
}

/** True when id passes validateVolumeId. */
export function isValidVolumeId(id: string): boolean {
  try {
    validateVolumeId(id);
    return true;
  } catch {
    return false;
  }
}
