import type { JsonWebKey, KeyObject } from 'node:crypto';

// Node 20's JWK export holds the key's mutex while it allocates the JWK's strings. An allocation
// can start a garbage collection, and the collection may destroy the key generation job the key
// came from (the job object is garbage as soon as generateKeyPair(Sync) returns). That job's
// destructor takes the same mutex: the main thread waits on itself forever (seen in gdb:
// ExportJWKEcKey → EncodeBignum → GC → ~KeyGenJob → uv_mutex_lock; once in tens of thousands of
// fresh keys, within seconds with a 1 MiB young generation). OpenSSL's DER export does not
// allocate under that lock. So a key that a generation job made is never exported as a JWK; EC
// keys are made without a job (keys.ts), and the encoders fall back to DER for the others.

const madeByJob = new WeakSet<KeyObject>();

/** Marks key as made by one of Node's key generation jobs: it is never exported as a JWK. */
export function markMadeByJob(key: KeyObject): void {
  madeByJob.add(key);
}

/**
 * key's JWK, or undefined when it may not be exported safely or JWK has no form for it. origin is
 * the key key was made from, when it was (a public key made from a private one shares its lock).
 */
export function safeJwkOf(key: KeyObject, origin: KeyObject = key): JsonWebKey | undefined {
  if (madeByJob.has(origin)) return undefined;
  try {
    return key.export({ format: 'jwk' });
  } catch {
    // Kinds JWK has no form for (secp224r1, DSA): the caller's DER path answers.
    return undefined;
  }
}
