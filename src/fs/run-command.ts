import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { FsError } from './errors.js';

const execFileAsync = promisify(execFile);

/** Runs a command without a shell; FsError naming the command line and its stderr on failure. */
export async function runCommand(command: string, args: readonly string[]): Promise<string> {
  try {
    const { stdout } = await execFileAsync(command, args, { encoding: 'utf8' });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: unknown; code?: unknown; message: string };
    const stderr = typeof e.stderr === 'string' ? e.stderr.trim() : '';
    const why = stderr !== '' ? stderr : e.code === 'ENOENT' ? `${command} not found` : e.message;
    throw new FsError(`${[command, ...args].join(' ')} failed: ${why}`, { cause: err });
  }
}
