import { certificatePem, splitPemCertificates } from './chain.js';
import { PkiError } from './errors.js';

/**
 * One CA file from the PEM texts of a trust bundle's sources: every block must be a
 * CERTIFICATE that parses; duplicates (the same DER) are dropped; text between blocks is
 * not kept. Sources merged from several objects (`sorted`) are ordered by their DER bytes, so
 * the file does not change with the order objects are listed in. Throws PkiError naming the
 * source and the block when one is unusable, or when there is no certificate at all.
 */
export function trustBundlePem(
  sources: ReadonlyArray<{ name: string; pem: string }>,
  order: 'given' | 'sorted',
): string {
  const seen = new Map<string, string>();
  for (const { name, pem } of sources) {
    let certificates: ReturnType<typeof splitPemCertificates>;
    try {
      certificates = splitPemCertificates(pem);
    } catch (err) {
      throw new PkiError(`${name}: ${(err as Error).message}`);
    }
    for (const certificate of certificates) {
      const der = certificate.raw.toString('hex');
      if (!seen.has(der)) seen.set(der, certificatePem(certificate));
    }
  }
  if (seen.size === 0) {
    throw new PkiError(
      sources.length === 0
        ? 'no object holds the bundle'
        : `no PEM CERTIFICATE block in ${sources.map((s) => s.name).join(', ')}`,
    );
  }
  const entries = [...seen.entries()];
  // Keys are distinct: no two entries compare equal.
  if (order === 'sorted') entries.sort(([a], [b]) => (a < b ? -1 : 1));
  return entries.map(([, pem]) => pem).join('');
}
