/** When to renew a certificate (cert-manager pkg/util/pki/renewaltime.go without ARI): renewBeforeMs if 0 < it < lifetime, else a third of the lifetime, before NotAfter, truncated down to the second. */
export function renewalTime(notBefore: Date, notAfter: Date, renewBeforeMs?: number): Date {
  const lifetime = notAfter.getTime() - notBefore.getTime();
  const renewBefore =
    renewBeforeMs !== undefined && renewBeforeMs > 0 && renewBeforeMs < lifetime
      ? renewBeforeMs
      : // Go divides integer nanoseconds; flooring whole milliseconds gives the same second.
        Math.floor(lifetime / 3);
  return new Date(Math.floor((notAfter.getTime() - renewBefore) / 1000) * 1000);
}
