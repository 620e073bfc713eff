import type { CommandOutput } from '../../src/cli/common/command-output.js';

/** A subcommand's entry point: its args and where it prints; resolves with the exit status. */
export type CommandRun = (args: string[], out: CommandOutput) => Promise<number>;

/** Runs a command in this process, capturing what it prints (same code as the CLI, no spawn). */
export async function runInProcess(
  run: CommandRun,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await run(args, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { code, stdout, stderr };
}
