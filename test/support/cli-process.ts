import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { nodeArgsFor, runnablePath } from './project-files.js';

const run = promisify(execFile);
// Under npm test the emitted build/src/cli/main.js, started by plain node: no loader to pay for
// at each start, and its coverage counts (see nodeArgsFor).
/** The `cert-csi` entry point as this process runs it (build/src/cli/main.js under npm test). */
export const MAIN = runnablePath('src/cli/main.ts');
/** The node arguments that run MAIN in this form (none for the emitted JavaScript). */
export const NODE_ARGS = nodeArgsFor(MAIN);

/**
 * Runs `cert-csi ARGS` to completion; never rejects, reports the exit code (-1 when killed
 * after timeoutMs, 90 s by default).
 */
export async function runCli(
  args: readonly string[],
  options: { timeoutMs?: number } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [...NODE_ARGS, MAIN, ...args], {
      timeout: options.timeoutMs ?? 90_000,
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
 * The address (host:port) a started `cert-csi` process logged for its HTTP endpoint name
 * (`metrics` or `health`, from its "serving HTTP" line); '' when it logged none.
 */
export function servedAddress(node: NodeProcess, endpoint: 'metrics' | 'health'): string {
  const line = node
    .output()
    .split('\n')
    .find((l) => l.includes('"serving HTTP"') && l.includes(`"endpoint":"${endpoint}"`));
  return line ? (JSON.parse(line) as { address: string }).address : '';
}

/** Starts `cert-csi node ARGS` and waits for its start-up log line (or its early exit). */
export function startNode(
  args: readonly string[],
  options: { untracked?: boolean; through?: readonly string[] } = {},
): Promise<NodeProcess> {
  return startCommand(['node', ...args], 'cert-csi node plugin started', options);
}

/** Starts `cert-csi ARGS` and resolves once its output contains ready (see startNode). */
export function startCommand(
  args: readonly string[],
  ready: string,
  options: {
    env?: Record<string, string>;
    /** The working directory, for relative paths as `npm start` gives them (default: this one). */
    cwd?: string;
    /**
     * Without tap's processinfo hook. tap puts it (an --import in NODE_OPTIONS) back into the
     * environment of every child it sees spawned, and it loads each module through a loader
     * thread: a `cert-csi controller` start takes about 1.5 s of CPU without it, 4 s with it (as
     * measured). It serves coverage and nothing else, so a test run without coverage (the
     * crash trials) starts the child through `env -u NODE_OPTIONS -u NODE_V8_COVERAGE`, which
     * execs node: the same pid, so signals reach it. Without NODE_V8_COVERAGE V8 keeps no
     * block counts either: a crash-trial group takes ~13% less CPU (2 of 16 s), and a child
     * killed by SIGKILL would never have written its coverage anyway.
     */
    untracked?: boolean;
    /**
     * A command line that runs the command given after it, and must exec it so signals
     * reach it (e.g. `unshare ... sh -c '... && exec "$@"' sh`).
     */
    through?: readonly string[];
  } = {},
): Promise<NodeProcess> {
  const command = [...(options.through ?? []), process.execPath, ...NODE_ARGS, MAIN, ...args];
  const [file, ...argv] = options.untracked
    ? ['env', '-u', 'NODE_OPTIONS', '-u', 'NODE_V8_COVERAGE', ...command]
    : command;
  const child = spawn(file ?? process.execPath, argv, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...options.env },
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      // Not left running behind the failed test (holding its data root and socket).
      child.kill('SIGKILL');
      reject(new Error(`${args[0]} did not start:\n${output}`));
    }, 60_000);
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
