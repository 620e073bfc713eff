import { timingSafeEqual } from 'node:crypto';
import { resolve } from 'node:path';
import { quoted } from '../../api/echoed-value.js';
import type { ErrorKind } from '../../base/error-catalogue.js';
import { stripSecrets, type VolumeCapabilityRecord } from '../../volume/metadata.js';
import type { PublishRequest } from '../volume-publisher.js';

// Attributes are immutable once a volume is published, as in csi-driver: the certificate on
// disk was issued for them. A republish that asks for something else is refused rather than
// answered with a certificate that does not match it (CSI spec, NodePublishVolume:
// ALREADY_EXISTS "Volume published but is incompatible").

/** The published side of a comparison: what metadata.json (or a running publish) holds. */
export interface PublishedVolume {
  targetPath: string;
  /** kubelet's volume context; secret keys are ignored (see pkcs12Password). */
  volumeContext: Record<string, string>;
  volumeMountGroup?: string | undefined;
  /**
   * The volume_capability; undefined in metadata.json written before it was recorded, and then
   * not compared (only what was recorded is).
   */
  volumeCapability?: VolumeCapabilityRecord | undefined;
  /** The PKCS#12 password in effect (undefined without PKCS#12), compared, never shown. */
  pkcs12Password?: string | undefined;
  /** The JKS password in effect (undefined without JKS), compared, never shown. */
  jksPassword?: string | undefined;
  /** False while the volume never got a certificate: nothing was mounted at its target yet. */
  issued: boolean;
}

/** A publish of a volume that is already published with other attributes or another target. */
export class RepublishConflictError extends Error {
  override readonly name = 'RepublishConflictError';
  constructor(
    readonly volumeId: string,
    /** One line per difference, values shortened, secrets never shown. */
    readonly differences: readonly string[],
  ) {
    super(
      `volume ${volumeId} is already published with other settings (volume attributes are immutable; unpublish it first): ${differences.join('; ')}`,
    );
  }

  get errorKind(): ErrorKind {
    return 'CERT_CSI_REPUBLISH_CONFLICT';
  }
}

/** A publish request as the side of a republish comparison (a running publish counts as issued). */
export function asPublished(request: PublishRequest): PublishedVolume {
  return {
    targetPath: request.targetPath,
    volumeContext: request.volumeContext,
    volumeMountGroup: request.volumeMountGroup,
    volumeCapability: request.capability,
    pkcs12Password: request.spec.files.pkcs12?.password,
    jksPassword: request.spec.files.jks?.password,
    issued: true,
  };
}

// The keys under which a differing password is named (their legacy aliases mean the same).
const PKCS12_PASSWORD_KEY = 'csi.cert-manager.io/pkcs12-password';
const JKS_PASSWORD_KEY = 'csi.cert-manager.io/jks-password';

/**
 * What differs between a published volume and a new publish of it, as messages naming each
 * key (values shortened, secrets not shown); empty when the publish is compatible. A target
 * change is allowed while the published volume never got a certificate.
 */
export function republishDifferences(published: PublishedVolume, next: PublishedVolume): string[] {
  const differences: string[] = [];
  if (published.issued && resolve(published.targetPath) !== resolve(next.targetPath)) {
    differences.push(
      `target_path: published at ${quoted(published.targetPath)}, asked for ${quoted(next.targetPath)}`,
    );
  }
  const before = stripSecrets(published.volumeContext);
  const after = stripSecrets(next.volumeContext);
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  for (const key of keys) {
    if (before[key] === after[key]) continue;
    differences.push(
      `${key}: published ${quoteOrUnset(before[key])}, asked for ${quoteOrUnset(after[key])}`,
    );
  }
  if ((published.volumeMountGroup ?? '') !== (next.volumeMountGroup ?? '')) {
    differences.push(
      `volume_mount_group: published ${quoteOrUnset(published.volumeMountGroup)}, asked for ${quoteOrUnset(next.volumeMountGroup)}`,
    );
  }
  differences.push(...capabilityDifferences(published.volumeCapability, next.volumeCapability));
  const passwords: Array<[string, string | undefined, string | undefined]> = [
    [PKCS12_PASSWORD_KEY, published.pkcs12Password, next.pkcs12Password],
    [JKS_PASSWORD_KEY, published.jksPassword, next.jksPassword],
  ];
  for (const [key, before, after] of passwords) {
    // A first publish cut short before it stored the password has none to compare yet.
    const known = published.issued || before !== undefined;
    if (known && !sameSecret(before, after)) {
      differences.push(`${key}: differs from the published one (not shown)`);
    }
  }
  return differences;
}

// CSI, NodePublishVolume: ALREADY_EXISTS when the volume "has already been published at the
// specified target_path but is incompatible with the specified volume_capability".
function capabilityDifferences(
  published: VolumeCapabilityRecord | undefined,
  next: VolumeCapabilityRecord | undefined,
): string[] {
  if (!published || !next) return [];
  const differences: string[] = [];
  const compare = (field: string, before: string, after: string, same = before === after) => {
    if (same) return;
    differences.push(
      `volume_capability.${field}: published ${quoteOrUnset(before)}, asked for ${quoteOrUnset(after)}`,
    );
  };
  compare('access_mode', published.accessMode, next.accessMode);
  compare('mount.fs_type', published.fsType, next.fsType);
  // Compared as lists (["a,b"] is not ["a", "b"]); shown joined, as mount -o takes them.
  compare(
    'mount.mount_flags',
    published.mountFlags.join(','),
    next.mountFlags.join(','),
    sameList(published.mountFlags, next.mountFlags),
  );
  return differences;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i]);
}

function sameSecret(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function quoteOrUnset(value: string | undefined): string {
  return value === undefined || value === '' ? '(unset)' : quoted(value);
}
