// Node 20 deadlocks when a JWK export of a freshly generated key meets a garbage collection that
// destroys the key's generation job (src/pki/jwk-export.ts): the main thread waits on a mutex it
// holds, forever. A 1 MiB young generation makes collections frequent enough that the code before
// the fix hung within the first few thousand EC keys; in a plugin it was once in tens of
// thousands of issuances.
import { execFile } from 'node:child_process';
import t from 'tap';
import { moduleFileUrl } from '../support/project-files.js';

const KEYS = 6000;
// Far beyond the ~3 s the keys take on a busy 2-core machine; a hang never ends by itself.
const DEADLINE_MS = 90_000;

t.test(
  'generating keys and encoding them as an issuance does never hangs, whatever the GC does',
  async (t) => {
    const script = `
const keys = await import(${JSON.stringify(moduleFileUrl('src/pki/keys.ts'))});
const specs = [{ algorithm: 'ECDSA', size: 256 }, { algorithm: 'Ed25519' }, { algorithm: 'ECDSA', size: 384 }];
for (let i = 0; i < ${KEYS}; i++) {
  const key = await keys.generatePrivateKey(specs[i % 7 === 0 ? 1 : i % 11 === 0 ? 2 : 0]);
  keys.spkiOf(key);
  keys.encodePrivateKey(key, 'PKCS8');
}
console.log('done');`;
    const outcome = await new Promise<{ stdout: string; error: Error | null }>((resolve) => {
      execFile(
        process.execPath,
        [...process.execArgv, '--max-semi-space-size=1', '--input-type=module', '-e', script],
        { timeout: DEADLINE_MS, killSignal: 'SIGKILL', encoding: 'utf8' },
        (error, stdout) => resolve({ stdout, error }),
      );
    });
    t.equal(
      outcome.error && (outcome.error as { killed?: boolean }).killed
        ? `hung: killed after ${DEADLINE_MS} ms`
        : (outcome.error?.message ?? 'exited'),
      'exited',
      `${KEYS} keys generated and encoded`,
    );
    t.equal(outcome.stdout.trim(), 'done');
  },
);
