import { randomBytes, randomFillSync } from 'node:crypto';

// Every certificate takes 20 random bytes for its serial. One call to OpenSSL's generator has a
// fixed cost well above that of the bytes, so they are drawn a few KiB at a time and each
// byte is handed out once, copied, and wiped from the pool.
const POOL_SIZE = 4096;
const pool = Buffer.alloc(POOL_SIZE);
let used = POOL_SIZE;

/** size cryptographically random bytes in a fresh Buffer (node:crypto's randomBytes, pooled). */
export function pooledRandomBytes(size: number): Buffer {
  if (size > POOL_SIZE) return randomBytes(size);
  if (used + size > POOL_SIZE) {
    randomFillSync(pool);
    used = 0;
  }
  const out = Buffer.from(pool.subarray(used, used + size));
  pool.fill(0, used, used + size);
  used += size;
  return out;
}
