/** Orders strings by UTF-16 code unit, whatever the locale (Go's byte order for the ASCII names compared here). */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
