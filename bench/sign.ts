/**
 * CertificateRequests signed per second by the CA controller through the store, against
 * the raw src/pki signing cost measured in the same run (the floor).
 *
 *   npm run bench:sign [-- --requests 1000 --workers 4 --warmup 3000]
 */
import { parseArgs } from 'node:util';
import type { KeySpec } from '../src/pki/keys.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { csrs, ECDSA_P256, RSA_2048, signingFloor, signThroughStore } from './signing-stack.js';
import { type Figure, recordFigures } from './support/figures.js';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '1000' },
    workers: { type: 'string', default: '4' },
    warmup: { type: 'string', default: '3000' },
  },
});
const count = Number(values.requests);
const workers = Number(values.workers);
const warmup = Number(values.warmup);

/** Requests created in the store, signed by the running stack; timed until all are Issued. */
async function throughStore(caSpec: KeySpec, requests: string[], width: number): Promise<number> {
  const store = new MemoryStore();
  const rate = await signThroughStore({ store, caSpec, requests, width });
  store.close();
  return rate;
}

// The warm-up signs the first `warmup` of these again (forgetting them as parsed first).
const prepared = await csrs(Math.max(count, warmup));
const requests = prepared.slice(0, count);
console.log(
  `bench/sign: ${count} ECDSA P-256 CSRs, ${workers} signing workers, node ${process.version}`,
);
console.log(
  'CA key       | floor 1 worker | floor N workers | via store+controllers | ratio to floor N',
);
const figures: Figure[] = [];
for (const [label, spec, caType] of [
  ['ECDSA P-256', ECDSA_P256, 'ecdsa-p256'],
  ['RSA-2048', RSA_2048, 'rsa-2048'],
] as Array<[string, KeySpec, 'ecdsa-p256' | 'rsa-2048']>) {
  await signingFloor(spec, requests.slice(0, 20), 1); // warm-up
  // The store path too, long enough to reach its steady rate: V8 needs a few thousand
  // signings (about 2 s) before this path runs at full speed, and a signer runs for days.
  // With 50 warm-up requests the figure was mostly the first second of a process (see
  // bench/README.md, "Issue 28, third round").
  if (warmup > 0) await throughStore(spec, prepared.slice(0, warmup), workers);
  const floorOne = await signingFloor(spec, requests, 1);
  const floorN = await signingFloor(spec, requests, workers);
  const stack = await throughStore(spec, requests, workers);
  console.log(
    `${label.padEnd(12)} | ${floorOne.toFixed(0).padStart(10)} /s  | ${floorN.toFixed(0).padStart(11)} /s  | ${stack.toFixed(0).padStart(17)} /s   | ${(stack / floorN).toFixed(2)}`,
  );
  figures.push({
    name: `CRs signed via store+controllers, ${label} CA`,
    value: stack,
    unit: '/s',
    rawFloor: { of: 'signing', key: 'ecdsa-p256', ca: caType },
  });
}
recordFigures('sign', figures);
