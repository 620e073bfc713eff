/** Where a command writes; the process streams, or a test's buffers. */
export interface CommandOutput {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/** The process's own streams. */
export const processOutput: CommandOutput = { stdout: process.stdout, stderr: process.stderr };
