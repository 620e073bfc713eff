import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
const MAIN = new URL('../../src/cli/main.ts', import.meta.url).pathname;

// The child runs TypeScript like this process does: under tap that is tap's loader (and its
// coverage hook), elsewhere tsx.
function loaderArgs(): string[] {
  const own = process.execArgv.filter((a) => a.startsWith('--import') || a.startsWith('--loader'));
  return own.length > 0 ? process.execArgv : ['--import', 'tsx'];
}

/** Runs `cert-csi ARGS` to completion; never rejects, reports the exit code. */
export async function runCli(
  args: readonly string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [...loaderArgs(), MAIN, ...args], {
      timeout: 90_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const failed = err as { code?: number; stdout?: string; stderr?: string };
    return {
      code: typeof failed.code === 'number' ? failed.code : -1,
      stdout: failed.stdout ?? '',
      stderr: failed.stderr ?? '',
    };
  }
}

/** A long-running `cert-csi` process, resolved once it logged that it started. */
export interface NodeProcess {
  child: ChildProcess;
  output(): string;
  /** SIGTERM and wait for the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts `cert-csi node ARGS` and waits for its start-up log line (or its early exit).
 * With `tsx`, the child runs under tsx whatever this process's loader: much faster to start
 * than tap's ts-node, at the price of no coverage from the child.
 */
export function startNode(
  args: readonly string[],
  options: { tsx?: boolean } = {},
): Promise<NodeProcess> {
  return startCommand(['node', ...args], 'cert-csi node plugin started', options);
}

/** Starts `cert-csi ARGS` and resolves once its output contains ready (see startNode). */
export function startCommand(
  args: readonly string[],
  ready: string,
  options: { tsx?: boolean; env?: Record<string, string> } = {},
): Promise<NodeProcess> {
  const loader = options.tsx ? ['--import', 'tsx'] : loaderArgs();
  // tsx compiles the sources differently from tap's loader: V8 coverage written by such a
  // child would be merged into tap's report against the wrong code. Dropping the variables is
  // not enough under a coverage run (tap's processinfo hook adds them back to every spawn), so
  // tsx children belong in *.trial.ts files, which run without coverage.
  const env = options.tsx
    ? Object.fromEntries(
        Object.entries(process.env).filter(
          ([name]) =>
            name !== 'NODE_V8_COVERAGE' && name !== 'NODE_OPTIONS' && !name.startsWith('_TAPJS'),
        ),
      )
    : process.env;
  const child = spawn(process.execPath, [...loader, MAIN, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...env, ...options.env },
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${args[0]} did not start:\n${output}`)),
      60_000,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(ready)) {
        clearTimeout(timer);
        resolve({
          child,
          output: () => output,
          stop: async () => {
            child.kill('SIGTERM');
            return exited;
          },
        });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${args[0]} exited with ${code} before starting:\n${output}`));
    });
  });
}
