import { X509Certificate } from 'node:crypto';
import { GENERATION_FILENAME } from '../../attributes/filename-rules.js';
import { readCurrentFile } from '../../fs/atomic-writer.js';

/** Why a volume got a new generation: the `reason` of its generation file. */
export type RewriteReason = 'issued' | 'renewed' | 'trust-bundle-changed';

/**
 * The content of `generation.json`, written in the same generation as the certificate it
 * describes, so that a reader resolving `..data` once sees both or neither.
 */
export interface GenerationRecord {
  /** 1 for the first generation of the volume, one more for each rewrite. */
  generation: number;
  /**
   * The certificate's serial number, upper-case hex as `openssl x509 -serial` prints it.
   * This and the dates are absent only when the certificate on disk cannot be read.
   */
  serial?: string;
  /** RFC 3339, seconds. */
  notBefore?: string;
  notAfter?: string;
  reason: RewriteReason;
}

// A record is a few hundred bytes; anything larger is not ours.
const GENERATION_FILE_MAX_BYTES = 4096;

/**
 * The generation counter a file (as read from the volume's current generation) records; 0
 * when there is none or it holds no counter: the next generation then is 1.
 */
export function recordedGeneration(content: Uint8Array | undefined): number {
  if (content === undefined) return 0;
  try {
    const value: unknown = JSON.parse(Buffer.from(content).toString('utf8'));
    const generation = (value as { generation?: unknown } | null)?.generation;
    return typeof generation === 'number' && Number.isSafeInteger(generation) && generation > 0
      ? generation
      : 0;
  } catch {
    return 0;
  }
}

/** What a generation file says of its certificate (what an issuance read of it). */
export interface CertificateFacts {
  serial: string;
  notBefore: Date;
  notAfter: Date;
}

/**
 * The generation file of the next generation: counter one above previous, facts from the
 * certificate (its PEM, or the facts an issuance read for its own checks).
 */
export function generationFile(
  previous: number,
  certificate: Uint8Array | CertificateFacts,
  reason: RewriteReason,
): Uint8Array {
  let facts: Pick<GenerationRecord, 'serial' | 'notBefore' | 'notAfter'> | undefined;
  try {
    const read =
      certificate instanceof Uint8Array
        ? factsOfOpenssl(new X509Certificate(Buffer.from(certificate)))
        : certificate;
    facts = {
      serial: read.serial,
      notBefore: rfc3339(read.notBefore),
      notAfter: rfc3339(read.notAfter),
    };
  } catch {
    // Only a trust bundle rewrite meets a certificate it cannot read (an issuance checked its
    // own): the new CA file still goes out, with the counter and reason alone.
  }
  const record = { generation: previous + 1, ...facts, reason };
  return Buffer.from(`${JSON.stringify(record)}\n`);
}

/** The facts of a certificate OpenSSL read. */
export function factsOfOpenssl(leaf: X509Certificate): CertificateFacts {
  return {
    serial: leaf.serialNumber.toUpperCase(),
    notBefore: new Date(leaf.validFrom),
    notAfter: new Date(leaf.validTo),
  };
}

/**
 * The counter of the volume's current generation, read back from its data dir, so that it
 * keeps rising across plugin restarts; 0 when no generation (or no generation file) exists.
 */
export async function currentGenerationCounter(dataDir: string): Promise<number> {
  return recordedGeneration(
    await readCurrentFile(dataDir, GENERATION_FILENAME, GENERATION_FILE_MAX_BYTES),
  );
}

// Certificates carry whole seconds.
function rfc3339(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
