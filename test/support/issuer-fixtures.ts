import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createSelfSignedCa } from '../../src/pki/certificate.js';
import { type CsrRequest, createCsr } from '../../src/pki/csr.js';
import { encodePrivateKey, generatePrivateKey, type KeySpec } from '../../src/pki/keys.js';
import type { ResourceStore } from '../../src/store/resource-store.js';

export const run = promisify(execFile);

/** A CA key pair in PEM, as a CA Secret holds it. */
export interface TestCA {
  certificatePem: string;
  keyPem: string;
}

/** Makes a self-signed CA with a key of the given type. */
export async function makeCA(spec: KeySpec = { algorithm: 'ECDSA', size: 256 }): Promise<TestCA> {
  const key = await generatePrivateKey(spec);
  const certificatePem = await createSelfSignedCa({
    key,
    commonName: 'cert-csi test CA',
    durationMs: 365 * 24 * 3600 * 1000,
  });
  return { certificatePem, keyPem: encodePrivateKey(key, 'PKCS8') };
}

/** A fresh key and a CSR for it. */
export async function keyAndCsr(
  spec: KeySpec,
  request: Omit<CsrRequest, 'key'> = {},
): Promise<{ keyPem: string; csrPem: string }> {
  const key = await generatePrivateKey(spec);
  const csrPem = await createCsr({ key, ...request });
  return { keyPem: encodePrivateKey(key, 'PKCS8'), csrPem };
}

/** Runs fn with a temporary directory that is removed afterwards. */
export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'cert-csi-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** `openssl verify -CAfile ca leaf` (with untrusted intermediates from the chain); returns stdout. */
export async function opensslVerify(caPem: string, chainPem: string): Promise<string> {
  return withTempDir(async (dir) => {
    const ca = join(dir, 'ca.pem');
    const chain = join(dir, 'chain.pem');
    await writeFile(ca, caPem);
    await writeFile(chain, chainPem);
    const { stdout } = await run('openssl', ['verify', '-CAfile', ca, '-untrusted', chain, chain]);
    return stdout;
  });
}

/** `openssl x509 -text` of the first certificate in pem. */
export async function opensslText(pem: string): Promise<string> {
  return withTempDir(async (dir) => {
    const file = join(dir, 'cert.pem');
    await writeFile(file, pem);
    const { stdout } = await run('openssl', ['x509', '-in', file, '-noout', '-text']);
    return stdout;
  });
}

/** Creates each object in the store. */
export async function createAll(
  store: ResourceStore,
  items: Array<[Parameters<ResourceStore['create']>[0], Parameters<ResourceStore['create']>[1]]>,
): Promise<void> {
  for (const [kind, obj] of items) await store.create(kind, obj);
}
