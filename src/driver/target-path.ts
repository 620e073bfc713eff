import { isAbsolute, normalize } from 'node:path';
import { quoted } from '../api/echoed-value.js';

/** Linux PATH_MAX: the longest path a system call takes, in bytes, with its NUL. */
export const PATH_MAX_BYTES = 4096;
/** Linux NAME_MAX: the longest name of one directory entry, in bytes. */
export const NAME_MAX_BYTES = 255;

/**
 * Why a target path cannot be where a volume is mounted, one reason per broken rule: it is
 * required, absolute and normalized (no `.`, `..` or empty segments, which could lead
 * elsewhere than the path kubelet checks once symlinks are resolved), without NUL (which no
 * system call takes), shorter than PATH_MAX and every segment at most NAME_MAX bytes. mkdir
 * and mount would refuse these only after the key was generated and the certificate issued.
 */
export function targetPathProblems(path: string): string[] {
  if (!path) return ['required'];
  const problems: string[] = [];
  if (!isAbsolute(path)) problems.push('must be an absolute path');
  else if (normalize(path) !== path) {
    problems.push("must be a normalized absolute path (no '.', '..' or empty segments)");
  }
  if (path.includes('\0')) problems.push('must not contain NUL characters');
  const bytes = Buffer.byteLength(path, 'utf8');
  if (bytes >= PATH_MAX_BYTES) {
    problems.push(`must be shorter than ${PATH_MAX_BYTES} bytes (PATH_MAX), it has ${bytes}`);
  }
  const long = path.split('/').find((segment) => Buffer.byteLength(segment) > NAME_MAX_BYTES);
  if (long !== undefined) {
    problems.push(
      `each segment must be at most ${NAME_MAX_BYTES} bytes (NAME_MAX), ${quoted(long)} has ${Buffer.byteLength(long)}`,
    );
  }
  return problems;
}
