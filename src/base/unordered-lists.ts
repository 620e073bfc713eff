/** Same members, any order, repeats counted; unset and empty are equal (Go's EqualUnsorted). */
export function sameUnordered(
  a: readonly string[] | undefined,
  b: readonly string[] | undefined,
): boolean {
  const left = [...(a ?? [])].sort();
  const right = [...(b ?? [])].sort();
  return left.length === right.length && left.every((value, i) => value === right[i]);
}
