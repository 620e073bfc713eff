import { randomUUID } from 'node:crypto';
import { watch } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { type NamespacedName, parseNamespacedName } from '../../api/namespaced-name.js';
import { errorMessage } from '../../base/error-message.js';
import { triggerManualIssuance } from '../../certificates/manual-trigger.js';
import { removeFileDurably, writeFileAtomic } from '../../fs/atomic-file.js';
import { errnoCode } from '../../fs/errors.js';
import { readRegularFile } from '../../fs/regular-file.js';
import { DataRoot } from '../../volume/data-root.js';
import { validateVolumeId } from '../../volume/volume-id.js';
import {
  type CertificateTarget,
  type CertificateTriggered,
  formatRenewRequest,
  PROGRESS_SUFFIX,
  parseCertificateResult,
  parseRenewProgress,
  parseRenewResult,
  RENEW_RESULT_MAX_BYTES,
  REQUEST_SUFFIX,
  RESULT_SUFFIX,
  type RenewOutcome,
  type RenewTarget,
  renewDirOf,
} from '../../volume-manager/control/renew-protocol.js';
import {
  type CommandOutput,
  isDirectory,
  processOutput,
  startCommand,
  usageError,
} from '../common/data-root-command.js';
import { flagTimeout } from '../common/flag-values.js';
import { KUBE_CLIENT_HELP, KUBE_CLIENT_OPTIONS } from '../common/kube-flags.js';

// Longer than one issuance attempt's deadline (60 s), so a renewal that runs into it is reported.
const DEFAULT_TIMEOUT = '2m';

export const RENEW_HELP = `Usage: cert-csi renew --data-root DIR (--volume-id ID | --all) [--timeout DURATION]
       cert-csi renew --certificate NAMESPACE/NAME --data-root DIR [--timeout DURATION]
       cert-csi renew --certificate NAMESPACE/NAME --kubeconfig FILE [--context NAME]

Makes a running plugin renew now, whatever the renewal time, and waits until the new
certificate is written. The request is a file in DIR/..renew that the plugin watches;
the plugin answers with a result file. One line is printed per volume, as soon as that
volume is done (with --all, while the others are still renewing).

With --certificate, marks a cert-manager Certificate for issuance now, as "cmctl renew"
does: its Issuing condition becomes True with reason ManuallyTriggered and message
"Certificate re-issuance manually triggered" (observedGeneration = its generation, the
other conditions kept), written with a status update; a conflicting write is retried on
a fresh read. The Certificate controllers then issue it, whatever the renewal time and
any failure backoff. It prints "Manually triggered issuance of Certificate NAMESPACE/NAME".
A Certificate already issuing goes on with the issuance in progress (none is added): the
condition keeps its transition time, takes the new reason and message, and a note says so
on stderr.
  with --data-root DIR: a Certificate of the embedded plugin running with that data root;
    the request goes through DIR/..renew and the plugin, which owns the store, writes it.
  with --kubeconfig FILE or --context NAME: a Certificate in that cluster, written directly.

Exit codes: 0 every volume renewed, or the Certificate marked; 1 a renewal failed, the
Certificate does not exist or could not be written, or the plugin did not answer;
2 bad flags (a malformed NAMESPACE/NAME, an unusable kubeconfig), or no plugin ever ran
with this data root.

Flags:
  --data-root DIR                the plugin's --data-root
  --volume-id ID                 the volume to renew (cert-csi status lists them)
  --all                          renew every volume of this node
  --certificate NAMESPACE/NAME   the Certificate to mark for issuance
  --timeout DURATION             how long to wait for the plugin's answer, Go syntax
                                 (default ${DEFAULT_TIMEOUT})
  -h, --help                     show this help

Cluster, with --certificate:
${KUBE_CLIENT_HELP}`;

/** `cert-csi renew`: asks the plugin watching the data root to renew now, and reports the outcome. */
export async function runRenew(
  args: string[],
  out: CommandOutput = processOutput,
): Promise<number> {
  const started = startCommand(args, out, renewCommand);
  if (typeof started === 'number') return started;
  const { values } = started;
  if (values.certificate !== undefined) return renewCertificate(values, out);
  for (const flag of CLUSTER_FLAGS) {
    if (values.explicit.has(flag)) {
      return usageError(out, renewCommand, `--${flag}: only used with --certificate`);
    }
  }
  const dataRoot = values['data-root'];
  if (!dataRoot) return usageError(out, renewCommand, '--data-root is required');
  // Absolute, so every message names the same directory the plugin's logs do.
  const root = resolve(dataRoot);
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
  const plugin = await pluginOf(out, root, values.timeout);
  if (typeof plugin === 'number') return plugin;
  const printed = new Set<string>();
  const text = await plugin.ask(target, (progress) =>
    printOutcome(out, parseRenewProgress(progress), printed),
  );
  if (text === undefined) return 1;
  return report(out, text, printed);
}

// The flags that say how to reach a cluster; only `--certificate` goes to one.
const CLUSTER_FLAGS = Object.keys(KUBE_CLIENT_OPTIONS);

type RenewFlags = ReturnType<typeof parseFlags>;

/** `renew --certificate`: through the embedded plugin of --data-root, or in a cluster. */
async function renewCertificate(values: RenewFlags, out: CommandOutput): Promise<number> {
  if (values['volume-id'] !== undefined || values.all) {
    return usageError(out, renewCommand, 'give one of --certificate, --volume-id or --all');
  }
  let ref: NamespacedName;
  try {
    ref = parseNamespacedName(values.certificate ?? '');
  } catch (err) {
    return usageError(out, renewCommand, `--certificate: ${errorMessage(err)}`);
  }
  const inCluster = values.kubeconfig !== undefined || values.context !== undefined;
  const dataRoot = values['data-root'];
  if (inCluster && dataRoot) {
    return usageError(
      out,
      renewCommand,
      '--data-root and --kubeconfig/--context name two places: give --data-root for an embedded plugin, --kubeconfig (or --context) for a cluster',
    );
  }
  if (inCluster) {
    if (values.explicit.has('timeout')) {
      return usageError(out, renewCommand, '--timeout: only used with --data-root');
    }
    let store: Awaited<ReturnType<typeof clusterStoreOf>>;
    try {
      store = await clusterStoreOf(values);
    } catch (err) {
      return usageError(out, renewCommand, errorMessage(err));
    }
    try {
      const { alreadyIssuing } = await triggerManualIssuance(store, ref, () => new Date());
      return printTriggered(out, { ...ref, alreadyIssuing });
    } catch (err) {
      out.stderr.write(`cert-csi renew: ${errorMessage(err)}\n`);
      return 1;
    }
  }
  if (!dataRoot) {
    return usageError(
      out,
      renewCommand,
      '--certificate needs --data-root DIR (a Certificate of the embedded plugin) or --kubeconfig FILE (a Certificate in a cluster)',
    );
  }
  for (const flag of CLUSTER_FLAGS) {
    if (values.explicit.has(flag)) {
      return usageError(out, renewCommand, `--${flag}: only used with --kubeconfig or --context`);
    }
  }
  const plugin = await pluginOf(out, resolve(dataRoot), values.timeout);
  if (typeof plugin === 'number') return plugin;
  const target: CertificateTarget = { certificate: ref };
  // No progress file for a Certificate: the answer comes in one piece.
  const text = await plugin.ask(target, () => undefined);
  if (text === undefined) return 1;
  const result = readAnswer(out, text, parseCertificateResult);
  return typeof result === 'number' ? result : printTriggered(out, result.triggered);
}

// client-node costs ~0.6 s to load: only the cluster form pays for it.
async function clusterStoreOf(values: RenewFlags) {
  return (await import('../common/cluster-store.js')).clusterStore(values);
}

// cmctl's line on stdout; a note on stderr when the Certificate was issuing already.
function printTriggered(out: CommandOutput, triggered: CertificateTriggered): number {
  const name = `${triggered.namespace}/${triggered.name}`;
  out.stdout.write(`Manually triggered issuance of Certificate ${name}\n`);
  if (triggered.alreadyIssuing) {
    out.stderr.write(
      `note: Certificate ${name} was already being issued: that issuance goes on, no second one starts\n`,
    );
  }
  return 0;
}

/**
 * The running plugin of a data root, as a function that sends it one request and resolves with
 * the answer (undefined, with the reason on stderr, when none came within --timeout); or the
 * exit status when the flags or the data root rule it out.
 */
async function pluginOf(
  out: CommandOutput,
  root: string,
  timeoutText: string,
): Promise<
  | {
      ask: (
        target: RenewTarget | CertificateTarget,
        onProgress: (text: string) => void,
      ) => Promise<string | undefined>;
    }
  | number
> {
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
  return {
    async ask(target, onProgress) {
      const id = randomUUID();
      const requestPath = join(dir, `${id}${REQUEST_SUFFIX}`);
      const resultPath = join(dir, `${id}${RESULT_SUFFIX}`);
      const text = await requestAndWait(
        dir,
        {
          request: requestPath,
          result: resultPath,
          progress: join(dir, `${id}${PROGRESS_SUFFIX}`),
        },
        target,
        timeoutMs,
        onProgress,
      );
      if (text === undefined) {
        // Still there: nobody took it. Gone: the plugin is working on it and may yet finish.
        if (await removeFileDurably(requestPath)) {
          out.stderr.write(
            `no answer from the plugin within ${timeoutText}: is cert-csi node running with --data-root ${root}?\n`,
          );
        } else {
          out.stderr.write(
            `the plugin took the request but did not answer within ${timeoutText}; ${'certificate' in target ? 'the Certificate may yet be marked (see cert-csi status --certificate)' : 'the renewal may still complete (see cert-csi status)'}\n`,
          );
        }
        return undefined;
      }
      await removeFileDurably(resultPath);
      return text;
    },
  };
}

function parseFlags(args: string[]) {
  const { values, tokens } = parseArgs({
    args,
    options: {
      'data-root': { type: 'string' },
      'volume-id': { type: 'string' },
      all: { type: 'boolean' },
      certificate: { type: 'string' },
      timeout: { type: 'string', default: DEFAULT_TIMEOUT },
      ...KUBE_CLIENT_OPTIONS,
      help: { type: 'boolean', short: 'h' },
    },
    tokens: true,
  });
  // The flags given on the command line, defaults aside: some only fit one form.
  const explicit = new Set<string>(tokens.flatMap((t) => (t.kind === 'option' ? [t.name] : [])));
  return { ...values, explicit };
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
  target: RenewTarget | CertificateTarget,
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
    // Regular files only, never a blocking open (see regular-file.ts): anything else at the
    // result's name is an error, not an answer.
    const read = (path: string) =>
      readRegularFile(path, { maxBytes: RENEW_RESULT_MAX_BYTES }).then((data) =>
        data.toString('utf8'),
      );
    const look = () =>
      read(resultPath).then(
        (text) => finish({ text }),
        (err: unknown) => {
          // Not written yet; the next event tells.
          if (errnoCode(err) !== 'ENOENT') finish({ err });
        },
      );
    // Progress is a courtesy: a file gone (the result is there) or unreadable is skipped.
    const lookProgress = () =>
      read(progressPath).then(
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

// The plugin's answer when it says ok; otherwise what is wrong is printed and 1 returned.
function readAnswer<Ok extends { ok: true }>(
  out: CommandOutput,
  text: string,
  parse: (text: string) => Ok | { ok: false; error: string },
): Ok | 1 {
  let result: Ok | { ok: false; error: string };
  try {
    result = parse(text);
  } catch (err) {
    out.stderr.write(`cert-csi renew: unreadable answer from the plugin: ${errorMessage(err)}\n`);
    return 1;
  }
  if (!result.ok) {
    out.stderr.write(`cert-csi renew: ${result.error}\n`);
    return 1;
  }
  return result;
}

// Prints one line per volume; 0 only when the plugin renewed everything it was asked to.
function report(out: CommandOutput, text: string, printed: Set<string>): number {
  const result = readAnswer(out, text, parseRenewResult);
  if (typeof result === 'number') return result;
  printOutcome(out, result, printed);
  if (result.renewed.length === 0 && result.failed.length === 0) {
    out.stdout.write('no volumes to renew\n');
  }
  return result.failed.length === 0 ? 0 : 1;
}
