// The helper process of command-helper.ts: runs each command it is sent, without a shell, and
// sends back what it printed or why it failed. It loads nothing of the project (the import below
// is of types only), so it stays small (a fork of it is cheap) and starts fast. It exits when its
// parent goes.
import { execFile } from 'node:child_process';
import type { CommandReply, CommandRequest } from './command-helper.js';

// What a command may print before it is stopped: mount and umount print a line or two.
const MAX_OUTPUT_BYTES = 1024 * 1024;

function isRequest(value: unknown): value is CommandRequest {
  const r = value as Partial<CommandRequest> | null;
  return (
    typeof r?.id === 'number' &&
    typeof r.command === 'string' &&
    Array.isArray(r.args) &&
    r.args.every((a) => typeof a === 'string') &&
    typeof r.timeoutMs === 'number' &&
    (r.path === undefined || typeof r.path === 'string')
  );
}

function reply(message: CommandReply): void {
  if (process.connected) process.send?.(message);
}

process.on('message', (message: unknown) => {
  if (!isRequest(message)) return;
  const { id, command, args, timeoutMs, path } = message;
  execFile(
    command,
    args,
    {
      encoding: 'utf8',
      timeout: timeoutMs,
      killSignal: 'SIGKILL',
      maxBuffer: MAX_OUTPUT_BYTES,
      env: path === undefined ? process.env : { ...process.env, PATH: path },
    },
    (err, stdout, stderr) => {
      if (!err) {
        reply({ id, ok: true, stdout });
        return;
      }
      const code = (err as { code?: unknown }).code;
      reply({
        id,
        ok: false,
        stderr,
        message: err.message,
        ...(typeof code === 'string' ? { code } : {}),
        ...(err.killed ? { killed: true } : {}),
      });
    },
  );
});

// The parent went (or closed the channel): nothing more will be asked.
process.on('disconnect', () => process.exit(0));
