import { canonicalIpAddress } from '../pki/san.js';

/** Same members, any order, repeats counted; unset and empty are equal (Go's EqualUnsorted). */
export function sameUnordered(
  a: readonly string[] | undefined,
  b: readonly string[] | undefined,
): boolean {
  const left = [...(a ?? [])].sort();
  const right = [...(b ?? [])].sort();
  return left.length === right.length && left.every((value, i) => value === right[i]);
}

/** Same IP addresses in any order, however each is spelled; text that is no IP equals nothing but itself. */
export function sameIpAddresses(
  a: readonly string[] | undefined,
  b: readonly string[] | undefined,
): boolean {
  const canonical = (text: string) => {
    try {
      return canonicalIpAddress(text);
    } catch {
      return `invalid:${text}`;
    }
  };
  return sameUnordered((a ?? []).map(canonical), (b ?? []).map(canonical));
}
