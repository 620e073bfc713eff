import { parseGoInteger } from '../base/go-text.js';

// (gid_t)-1 means "leave the group unchanged" to chown(2), so it is not a group;
// csi-lib accepts it.
const MAX_GID = 4294967294n;

export type ParsedGid = { ok: true; gid: number } | { ok: false; message: string };

/** Parses an fs-group attribute or CSI volume_mount_group: a decimal gid in 1..4294967294, with csi-lib's messages. */
export function parseGid(text: string): ParsedGid {
  const parsed = parseGoInteger(text, 'ParseInt');
  if (!parsed.ok) return { ok: false, message: `value must be a valid integer: ${parsed.message}` };
  if (parsed.value <= 0n || parsed.value > MAX_GID) {
    return {
      ok: false,
      message: `gid value must be greater than 0 and less than 4294967295: ${parsed.value}`,
    };
  }
  return { ok: true, gid: Number(parsed.value) };
}
