import { spawn } from 'node:child_process';
import type { NodeProcess } from './cli-process.js';

const MAIN = new URL('../../src/cli/main.ts', import.meta.url).pathname;

/**
 * Like startNode (cli-process.ts), but the child always runs under tsx (esbuild) rather than
 * the loader of this process. Under tap that loader is ts-node, which transpiles every source
 * file again in each child: 6-7 s per start on a 2-core machine, against about 2 s with tsx.
 * For tests that start the plugin dozens of times; the child's coverage is not collected.
 */
export function startTsxNode(args: readonly string[]): Promise<NodeProcess> {
  // tsx compiles the sources differently from tap's loader: V8 coverage written by this child
  // would be merged into tap's report against the wrong code and corrupt it, so none is written.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) =>
        name !== 'NODE_V8_COVERAGE' && name !== 'NODE_OPTIONS' && !name.startsWith('_TAPJS'),
    ),
  );
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'node', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`node did not start:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('cert-csi node plugin started')) {
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
      reject(new Error(`node exited with ${code} before starting:\n${output}`));
    });
  });
}
