import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

const UNSHARE = ['--mount', '--propagation', 'private'];

/** Why mount tests cannot run here, or undefined when a private mount namespace is available. */
export async function mountNamespaceUnavailable(): Promise<string | undefined> {
  if (process.platform !== 'linux') return `not Linux (${process.platform})`;
  if (process.getuid?.() !== 0) return 'not running as root';
  try {
    await run('unshare', [...UNSHARE, 'true']);
    return undefined;
  } catch (err) {
    return `unshare failed: ${(err as Error).message.trim()}`;
  }
}

// The child runs TypeScript like this process does: under tap that is tap's loader (and its
// coverage hook), elsewhere tsx.
function loaderArgs(): string[] {
  const own = process.execArgv.filter((a) => a.startsWith('--import') || a.startsWith('--loader'));
  return own.length > 0 ? process.execArgv : ['--import', 'tsx'];
}

/**
 * Runs a TypeScript script in a new private mount namespace (`unshare --mount --propagation
 * private`): its mounts never reach the host and vanish when it exits. Resolves its stdout.
 */
export async function runInMountNamespace(
  script: string,
  args: readonly string[] = [],
  timeoutMs = 60_000,
): Promise<{ stdout: string; stderr: string }> {
  const { stdout, stderr } = await run(
    'unshare',
    [...UNSHARE, process.execPath, ...loaderArgs(), script, ...args],
    { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
  );
  return { stdout, stderr };
}

/** A check reported by a namespace script: name, result and what was seen. */
export interface NamespaceCheck {
  name: string;
  ok: boolean;
  detail?: unknown;
}
