import { randomUUID } from 'node:crypto';
import { watch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { errorMessage } from '../base/error-message.js';
import {
  formatRenewRequest,
  PROGRESS_SUFFIX,
  parseRenewProgress,
  parseRenewResult,
  REQUEST_SUFFIX,
  RESULT_SUFFIX,
  type RenewOutcome,
  type RenewTarget,
  renewDirOf,
} from '../renewal/renew-protocol.js';
import { removeFileDurably, writeFileAtomic } from '../volume/atomic-file.js';
import { DataRoot } from '../volume/data-root.js';
import { errnoCode } from '../volume/errors.js';
import { validateVolumeId } from '../volume/volume-id.js';
import {
  type CommandOutput,
  isDirectory,
  processOutput,
  startDataRootCommand,
  usageError,
} from './data-root-command.js';
import { flagTimeout } from './flag-values.js';

// Longer than one issuance attempt's deadline (60 s), so a renewal that runs into it is reported.
const DEFAULT_TIMEOUT = '2m';

export const RENEW_HELP = `Usage: cert-csi renew --data-root DIR (--volume-id ID | --all) [--timeout DURATION]

Makes a running plugin renew now, whatever the renewal time, and waits until the new
certificate is written. The request is a file in DIR/..renew that the plugin watches;
the plugin answers with a result file. One line is printed per volume, as soon as that
volume is done (with --all, while the others are still renewing).

Exit codes: 0 every volume renewed; 1 a renewal failed or the plugin did not answer;
2 bad flags, or no plugin ever ran with this data root.

Flags:
  --data-root DIR     the plugin's --data-root
  --volume-id ID      the volume to renew (cert-csi status lists them)
  --all               renew every volume of this node
  --timeout DURATION  how long to wait for the answer, Go syntax (default ${DEFAULT_TIMEOUT})
  -h, --help          show this help
`;

/** `cert-csi renew`: asks the plugin watching the data root to renew now, and reports the outcome. */
export async function runRenew(
  args: string[],
  out: CommandOutput = processOutput,
): Promise<number> {
  const started = startDataRootCommand(args, out, renewCommand);
  if (typeof started === 'number') return started;
  const { values, root } = started;
  const volumeId = values['volume-id'];
  if ((volumeId === undefined) === (values.all !== true)) {
    return usageError(out, renewCommand, 'give either --volume-id ID or --all');
  }
  let target: RenewTarget;
  if (volumeId === undefined) {
    target = { all: true };
  } else {
    try {
      validateVolumeId(volumeId);
    } catch (err) {
      return usageError(out, renewCommand, errorMessage(err));
    }
    target = { volumeId };
  }
  const timeoutText = values.timeout;
  let timeoutMs: number;
  try {
    timeoutMs = flagTimeout('--timeout', timeoutText);
  } catch (err) {
    return usageError(out, renewCommand, errorMessage(err));
  }
  const dir = renewDirOf(new DataRoot(root));
  if (!(await isDirectory(dir))) {
    // The plugin creates the dir at start: without it, no plugin ever used this data root.
    return usageError(
      out,
      renewCommand,
      `${dir} does not exist: is cert-csi node running with --data-root ${root}?`,
    );
  }

  const id = randomUUID();
  const requestPath = join(dir, `${id}${REQUEST_SUFFIX}`);
  const resultPath = join(dir, `${id}${RESULT_SUFFIX}`);
  const printed = new Set<string>();
  const text = await requestAndWait(
    dir,
    { request: requestPath, result: resultPath, progress: join(dir, `${id}${PROGRESS_SUFFIX}`) },
    target,
    timeoutMs,
    (progress) => printOutcome(out, parseRenewProgress(progress), printed),
  );
  if (text === undefined) {
    // Still there: nobody took it. Gone: the plugin is working on it and may yet finish.
    if (await removeFileDurably(requestPath)) {
      out.stderr.write(
        `no answer from the plugin within ${timeoutText}: is cert-csi node running with --data-root ${root}?\n`,
      );
    } else {
      out.stderr.write(
        `the plugin took the request but did not answer within ${timeoutText}; the renewal may still complete (see cert-csi status)\n`,
      );
    }
    return 1;
  }
  await removeFileDurably(resultPath);
  return report(out, text, printed);
}

function parseFlags(args: string[]) {
  return parseArgs({
    args,
    options: {
      'data-root': { type: 'string' },
      'volume-id': { type: 'string' },
      all: { type: 'boolean' },
      timeout: { type: 'string', default: DEFAULT_TIMEOUT },
      help: { type: 'boolean', short: 'h' },
    },
  }).values;
}

const renewCommand = { name: 'renew', help: RENEW_HELP, parse: parseFlags };

/**
 * Writes the request and resolves with the result file's text, or undefined after timeoutMs;
 * each version of the progress file seen meanwhile goes to onProgress.
 * The dir is watched before the request exists, and the result is looked for once the request is
 * written, so an answer can never slip between the two; there is no polling.
 */
function requestAndWait(
  dir: string,
  paths: { request: string; result: string; progress: string },
  target: RenewTarget,
  timeoutMs: number,
  onProgress: (text: string) => void,
): Promise<string | undefined> {
  const { request: requestPath, result: resultPath, progress: progressPath } = paths;
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (outcome: { text?: string; err?: unknown }) => {
      if (done) return;
      done = true;
      watcher.close();
      clearTimeout(timer);
      if (outcome.err !== undefined) reject(outcome.err);
      else resolve(outcome.text);
    };
    const look = () =>
      readFile(resultPath, 'utf8').then(
        (text) => finish({ text }),
        (err: unknown) => {
          // Not written yet; the next event tells.
          if (errnoCode(err) !== 'ENOENT') finish({ err });
        },
      );
    // Progress is a courtesy: a file gone (the result is there) or unreadable is skipped.
    const lookProgress = () =>
      readFile(progressPath, 'utf8').then(
        (text) => {
          if (!done) onProgress(text);
        },
        () => undefined,
      );
    const resultName = resultPath.slice(dir.length + 1);
    const progressName = progressPath.slice(dir.length + 1);
    const watcher = watch(dir, (_event, name) => {
      if (name === null || name === progressName) void lookProgress();
      if (name === null || name === resultName) void look();
    });
    watcher.on('error', (err) => finish({ err }));
    const timer = setTimeout(() => finish({}), timeoutMs);
    writeFileAtomic(requestPath, formatRenewRequest(target, new Date()), 0o600).then(
      () => look(),
      (err: unknown) => finish({ err }),
    );
  });
}

// One line per volume not printed yet (printed holds the lines already written).
function printOutcome(out: CommandOutput, outcome: RenewOutcome, printed: Set<string>): void {
  const lines = [
    ...outcome.renewed.map((r) => {
      const next = r.nextIssuanceTime === undefined ? '' : `, next renewal ${r.nextIssuanceTime}`;
      return `renewed ${r.volumeId}: not after ${r.notAfter}${next}\n`;
    }),
    ...outcome.failed.map((f) => `failed ${f.volumeId}: ${f.error}\n`),
  ];
  for (const line of lines) {
    if (printed.has(line)) continue;
    printed.add(line);
    out.stdout.write(line);
  }
}

// Prints one line per volume; 0 only when the plugin renewed everything it was asked to.
function report(out: CommandOutput, text: string, printed: Set<string>): number {
  let result: ReturnType<typeof parseRenewResult>;
  try {
    result = parseRenewResult(text);
  } catch (err) {
    out.stderr.write(`cert-csi renew: unreadable answer from the plugin: ${errorMessage(err)}\n`);
    return 1;
  }
  if (!result.ok) {
    out.stderr.write(`cert-csi renew: ${result.error}\n`);
    return 1;
  }
  printOutcome(out, result, printed);
  if (result.renewed.length === 0 && result.failed.length === 0) {
    out.stdout.write('no volumes to renew\n');
  }
  return result.failed.length === 0 ? 0 : 1;
}
