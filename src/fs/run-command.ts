import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { VolumeError } from './errors.js';

const execFileAsync = promisify(execFile);

/** Runs a command without a shell; VolumeError naming the command line and its stderr on failure. */
export async function runCommand(command: string, args: readonly string[]): Promise<string> {
  try {
    const { stdout } = await execFileAsync(command, args, { encoding: 'utf8' });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: unknown; code?: unknown; message: string };
    const stderr = typeof e.stderr === 'string' ? e.stderr.trim() : '';
    const why = stderr !== '' ? stderr : e.code === 'ENOENT' ? `${command} not found` : e.message;
    throw new VolumeError(`${[command, ...args].join(' ')} failed: ${why}`, { cause: err });
  }
}
