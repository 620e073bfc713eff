import { type ChildProcess, fork } from 'node:child_process';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { errorMessage } from '../base/error-message.js';

/** One command sent to the helper process. */
export interface CommandRequest {
  id: number;
  command: string;
  args: string[];
  /** The helper kills the command (SIGKILL) after this long. */
  timeoutMs: number;
  /** The asking process's PATH at the time: the command is looked up as it would have looked. */
  path?: string;
}

/** The helper's answer: what the command printed, or why it failed. */
export type CommandReply =
  | { id: number; ok: true; stdout: string }
  | {
      id: number;
      ok: false;
      stderr: string;
      /** Node's message for the failure ("Command failed: ..."). */
      message: string;
      /** The errno code when the command could not be started (ENOENT: not found). */
      code?: string;
      /** Killed at its timeout. */
      killed?: boolean;
    };

/** How long past a command's own timeout the helper has to answer before it is taken for hung. */
export const COMMAND_HELPER_GRACE_MS = 5_000;

const here = fileURLToPath(import.meta.url);
// Beside this module, in the form this process runs (emitted .js, or .ts under a loader).
const helperScript = join(dirname(here), `command-helper-process${extname(here)}`);

interface Pending {
  answer(reply: CommandReply): void;
  fail(err: Error): void;
}

/**
 * Runs commands in a small helper process, started at the first command and kept, instead of
 * in this one. Node starts a process by forking the one that asks, which copies its page tables
 * while the event loop waits: 6-20 ms per spawn on the bench machine for a 50-350 MB process
 * (bench/README.md, issue 28's fifth round), most of a bind-mode publish's main-thread time. The
 * helper is small and forks on its own time. It does not keep this process alive, exits when
 * this process goes, and is started again after it dies; a command it does not answer in time
 * fails, and the helper is replaced.
 */
export class CommandHelper {
  private child: ChildProcess | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly graceMs: number;

  constructor(options: { graceMs?: number } = {}) {
    this.graceMs = options.graceMs ?? COMMAND_HELPER_GRACE_MS;
  }

  /** Runs command with args (no shell); resolves the helper's reply, rejects when it gave none. */
  run(command: string, args: readonly string[], timeoutMs: number): Promise<CommandReply> {
    return new Promise((resolve, reject) => {
      let child: ChildProcess;
      try {
        child = this.started();
      } catch (err) {
        reject(new Error(`cannot start the command helper: ${errorMessage(err)}`));
        return;
      }
      const id = this.nextId++;
      const timer = setTimeout(() => {
        settle();
        reject(
          new Error(`the command helper gave no answer within ${timeoutMs + this.graceMs} ms`),
        );
        // Hung: whatever else it runs is lost with it, and the next command starts a new one.
        this.lost(child, new Error('the command helper was stopped: it stopped answering'));
        child.kill('SIGKILL');
      }, timeoutMs + this.graceMs);
      const settle = () => {
        clearTimeout(timer);
        this.pending.delete(id);
      };
      this.pending.set(id, {
        answer: (reply) => {
          settle();
          resolve(reply);
        },
        fail: (err) => {
          settle();
          reject(err);
        },
      });
      const { PATH } = process.env;
      const request: CommandRequest = {
        id,
        command,
        args: [...args],
        timeoutMs,
        ...(PATH === undefined ? {} : { path: PATH }),
      };
      child.send(request, (err) => {
        if (err)
          this.pending.get(id)?.fail(new Error(`cannot reach the command helper: ${err.message}`));
      });
    });
  }

  /** Stops the helper; commands in flight fail. */
  close(): void {
    const child = this.child;
    if (!child) return;
    this.lost(child, new Error('the command helper was closed'));
    child.kill('SIGKILL');
  }

  private started(): ChildProcess {
    if (this.child) return this.child;
    // A TypeScript helper needs this process's loader; compiled code needs no flags, and must not
    // inherit one such as --inspect's port.
    const execArgv = extname(helperScript) === '.ts' ? process.execArgv : [];
    const child = fork(helperScript, [], {
      execArgv,
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      serialization: 'json',
    });
    child.on('message', (message: unknown) => {
      const reply = message as CommandReply;
      if (typeof reply?.id === 'number') this.pending.get(reply.id)?.answer(reply);
    });
    child.on('error', (err) =>
      this.lost(child, new Error(`the command helper failed: ${err.message}`)),
    );
    child.on('exit', (code, signal) =>
      this.lost(child, new Error(`the command helper exited (${signal ?? `code ${code}`})`)),
    );
    // An idle helper keeps nothing alive; a command in flight does, by its timer.
    child.unref();
    child.channel?.unref();
    this.child = child;
    return child;
  }

  // Fails every command in flight on child, once, and forgets it.
  private lost(child: ChildProcess, err: Error): void {
    if (this.child !== child) return;
    this.child = undefined;
    for (const pending of [...this.pending.values()]) pending.fail(err);
  }
}
