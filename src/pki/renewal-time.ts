/**
 * When to renew a certificate (cert-manager pkg/util/pki/renewaltime.go without ARI or windows):
 * renewBeforeMs if 0 < it < lifetime, else renewBeforePercentage of the lifetime if
 * 0 < it < 100, else a third of the lifetime, before NotAfter, truncated down to the second.
 */
export function renewalTime(
  notBefore: Date,
  notAfter: Date,
  renewBeforeMs?: number,
  renewBeforePercentage?: number,
): Date {
  const lifetime = notAfter.getTime() - notBefore.getTime();
  let renewBefore: number;
  if (renewBeforeMs !== undefined && renewBeforeMs > 0 && renewBeforeMs < lifetime) {
    renewBefore = renewBeforeMs;
  } else if (
    renewBeforePercentage !== undefined &&
    renewBeforePercentage > 0 &&
    renewBeforePercentage < 100
  ) {
    // cert-manager multiplies in float and truncates to whole nanoseconds; whole milliseconds
    // give the same second after the truncation below.
    renewBefore = Math.floor((lifetime * renewBeforePercentage) / 100);
  } else {
    // Go divides integer nanoseconds; flooring whole milliseconds gives the same second.
    renewBefore = Math.floor(lifetime / 3);
  }
  return new Date(Math.floor((notAfter.getTime() - renewBefore) / 1000) * 1000);
}
