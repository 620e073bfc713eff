import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { projectPath } from '../support/project-files.js';

const exec = promisify(execFile);

/**
 * podman's settings for these machines (runc, ulimits within root's hard limit), passed
 * through CONTAINERS_CONF so nothing in /etc changes.
 */
export const PODMAN_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  CONTAINERS_CONF: projectPath('test', 'image', 'containers.conf'),
};

/** What a finished command printed, and how it ended. */
export interface CommandResult {
  stdout: string;
  stderr: string;
  code: number;
}

/** Runs a command to its end (up to timeoutMs); never throws for a non-zero exit. */
export async function command(
  file: string,
  args: readonly string[],
  timeoutMs = 60_000,
): Promise<CommandResult> {
  try {
    const { stdout, stderr } = await exec(file, args, {
      env: PODMAN_ENV,
      timeout: timeoutMs,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const failed = err as { stdout?: string; stderr?: string; code?: number | string };
    return {
      stdout: failed.stdout ?? '',
      stderr: failed.stderr ?? String(err),
      code: typeof failed.code === 'number' ? failed.code : -1,
    };
  }
}

/** Runs a command and returns its stdout; throws with its stderr (shortened) when it fails. */
export async function mustRun(
  file: string,
  args: readonly string[],
  timeoutMs?: number,
): Promise<string> {
  const result = await command(file, args, timeoutMs);
  if (result.code !== 0) {
    const said = (result.stderr || result.stdout).trim().slice(-2000);
    throw new Error(`${file} ${args.slice(0, 3).join(' ')} ... exited ${result.code}: ${said}`);
  }
  return result.stdout;
}

/** Runs podman; see mustRun. */
export function podman(args: readonly string[], timeoutMs?: number): Promise<string> {
  return mustRun('podman', args, timeoutMs);
}
