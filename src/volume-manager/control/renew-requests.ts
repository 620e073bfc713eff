import { type FSWatcher, watch } from 'node:fs';
import { chmod, lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../api/logger.js';
import type { NamespacedName } from '../../api/namespaced-name.js';
import { errorMessage } from '../../base/error-message.js';
import { ensureDirDurably, removeFileDurably, writeFileAtomic } from '../../fs/atomic-file.js';
import { errnoCode } from '../../fs/errors.js';
import { RefusedFileError, readRegularFile } from '../../fs/regular-file.js';
import type { DataRoot } from '../../volume/data-root.js';
import {
  type CertificateResult,
  formatRenewResult,
  PROGRESS_SUFFIX,
  parseRenewRequest,
  progressIdOf,
  RENEW_REQUEST_MAX_BYTES,
  RESULT_SUFFIX,
  type RenewOutcome,
  type RenewResult,
  type RenewTarget,
  renewDirOf,
  requestIdOf,
  resultIdOf,
} from './renew-protocol.js';

export type { RenewOutcome, RenewTarget } from './renew-protocol.js';

/**
 * Marks a Certificate of the plugin's store for issuance now (`cert-csi renew --certificate`);
 * resolves once the condition is written, throws with a message for the user otherwise.
 */
export type CertificateRenewHandler = (ref: NamespacedName) => Promise<{ alreadyIssuing: boolean }>;

/** The answer of a plugin whose Certificates are not its own (kubernetes mode). */
export const NO_CERTIFICATE_STORE_ERROR =
  'this plugin keeps no Certificates (it runs with --mode kubernetes): renew a Certificate through the cluster, with cert-csi renew --certificate NAMESPACE/NAME --kubeconfig FILE';

/**
 * Renews a target. It may call progress with the outcome so far each time a volume finishes
 * (the same object, growing, is fine: it is read when written out).
 */
export type RenewHandler = (
  target: RenewTarget,
  progress: (soFar: RenewOutcome) => void,
) => Promise<RenewOutcome>;

/** Results nobody picked up (the CLI timed out or was killed) are removed at start after this. */
export const STALE_RESULT_MS = 10 * 60 * 1000;

/**
 * Watches <data-root>/..renew for request files and answers each with a result file. Requests
 * for a Certificate go to renewCertificate; without it they are answered with
 * NO_CERTIFICATE_STORE_ERROR.
 */
export async function watchRenewRequests(
  dataRoot: DataRoot,
  handle: RenewHandler,
  logger: Logger,
  renewCertificate?: CertificateRenewHandler,
): Promise<{ close(): void }> {
  const dir = renewDirOf(dataRoot);
  await ensureDirDurably(dir, 0o700);
  // A link at the dir's name would take the chmod, the watch and the removals elsewhere.
  if (!(await lstat(dir)).isDirectory()) {
    throw new Error(`renewal request dir ${dir} is not a directory but a link: remove the link`);
  }
  // mkdir's mode is filtered by the umask, and an existing dir keeps whatever mode it had.
  await chmod(dir, 0o700);
  await removeStaleResults(dir, logger);

  // fs.watch reports one file several times (rename, change); a name is served once at a time.
  const serving = new Set<string>();
  const serve = (name: string): void => {
    const id = requestIdOf(name);
    if (id === undefined || serving.has(name)) return;
    serving.add(name);
    void answer(dir, id, name, { handle, renewCertificate }, logger).finally(() =>
      serving.delete(name),
    );
  };
  const scan = async (): Promise<void> => {
    try {
      for (const name of await readdir(dir)) serve(name);
    } catch (err) {
      logger.error({ dir, err: errorMessage(err) }, 'cannot list renewal requests');
    }
  };

  // Not persistent: the watcher alone must not keep a stopping plugin alive.
  const watcher: FSWatcher = watch(dir, { persistent: false }, (_event, name) => {
    // Some platforms give no name; a scan finds the request anyway.
    if (name === null) void scan();
    else serve(name);
  });
  watcher.on('error', (err) => {
    logger.error({ dir, err: err.message }, 'renewal request watcher failed');
  });
  // After the watcher is up: requests made while the plugin was down, or before the watch began.
  await scan();
  logger.info({ dir }, 'watching for manual renewal requests');
  return { close: () => watcher.close() };
}

// Reads and removes one request, runs it and writes its result; never throws.
async function answer(
  dir: string,
  id: string,
  name: string,
  handlers: { handle: RenewHandler; renewCertificate: CertificateRenewHandler | undefined },
  logger: Logger,
): Promise<void> {
  const path = join(dir, name);
  let text: string;
  try {
    // Only a regular file of a request's size: a FIFO, a socket or a link placed here is
    // refused at once instead of blocking a thread or leading out of the dir.
    text = (await readRegularFile(path, { maxBytes: RENEW_REQUEST_MAX_BYTES })).toString('utf8');
    // Removed before the work starts: a later event for this name finds nothing to do.
    await removeFileDurably(path);
  } catch (err) {
    // Already served: the event was for its removal.
    if (errnoCode(err) === 'ENOENT') return;
    if (err instanceof RefusedFileError) {
      await refuse(dir, id, err, logger);
      return;
    }
    logger.error({ path, err: errorMessage(err) }, 'cannot read renewal request');
    return;
  }
  let result: RenewResult | CertificateResult;
  const progress = progressWriter(join(dir, `${id}${PROGRESS_SUFFIX}`), logger);
  try {
    const request = parseRenewRequest(text);
    if ('certificate' in request) {
      const ref = request.certificate;
      logger.info({ request: id, certificate: ref }, 'manual issuance of a Certificate requested');
      if (!handlers.renewCertificate) throw new Error(NO_CERTIFICATE_STORE_ERROR);
      const { alreadyIssuing } = await handlers.renewCertificate(ref);
      result = { ok: true, triggered: { ...ref, alreadyIssuing } };
    } else {
      const target: RenewTarget = 'all' in request ? { all: true } : { volumeId: request.volumeId };
      logger.info({ request: id, ...target }, 'manual renewal requested');
      result = { ok: true, ...(await handlers.handle(target, progress.update)) };
    }
  } catch (err) {
    logger.warn({ request: id, err: errorMessage(err) }, 'manual renewal request failed');
    result = { ok: false, error: errorMessage(err) };
  }
  await writeResult(dir, id, result, logger);
  await progress.remove();
}

// A request entry that is no regular file (or too large) is taken away like a served request
// and answered with why; unlink removes a link, never what it points to.
async function refuse(dir: string, id: string, err: RefusedFileError, logger: Logger) {
  logger.warn({ path: err.path, err: err.message }, 'renewal request refused');
  try {
    await removeFileDurably(err.path);
  } catch (removeErr) {
    // A directory stays: unlink never removes one.
    logger.warn({ path: err.path, err: errorMessage(removeErr) }, 'cannot remove renewal request');
  }
  await writeResult(dir, id, { ok: false, error: err.message }, logger);
}

async function writeResult(
  dir: string,
  id: string,
  result: RenewResult | CertificateResult,
  logger: Logger,
): Promise<void> {
  const resultPath = join(dir, `${id}${RESULT_SUFFIX}`);
  try {
    await writeFileAtomic(resultPath, formatRenewResult(result), 0o600);
  } catch (err) {
    logger.error({ path: resultPath, err: errorMessage(err) }, 'cannot write renewal result');
  }
}

/**
 * Keeps a progress file up to date: one write at a time, and the newest outcome is written
 * after the one in flight (updates in between are folded into it). remove() waits for the last
 * write, then deletes the file.
 */
function progressWriter(
  path: string,
  logger: Logger,
): { update: (soFar: RenewOutcome) => void; remove: () => Promise<void> } {
  // Serialised at once: the handler may go on changing the object it passed.
  let latest = '';
  let writing: Promise<void> = Promise.resolve();
  let queued = false;
  const write = async (): Promise<void> => {
    queued = false;
    try {
      await writeFileAtomic(path, latest, 0o600);
    } catch (err) {
      // The result still says everything; only the live view is lost.
      logger.warn({ path, err: errorMessage(err) }, 'cannot write renewal progress');
    }
  };
  return {
    update: (soFar) => {
      latest = formatRenewResult({ ok: true, ...soFar });
      if (queued) return;
      queued = true;
      writing = writing.then(write);
    },
    remove: async () => {
      await writing;
      if (latest === '') return;
      try {
        await removeFileDurably(path);
      } catch (err) {
        logger.warn({ path, err: errorMessage(err) }, 'cannot remove renewal progress');
      }
    },
  };
}

async function removeStaleResults(dir: string, logger: Logger): Promise<void> {
  const cutoff = Date.now() - STALE_RESULT_MS;
  for (const name of await readdir(dir)) {
    // Progress files are left only by a plugin that stopped mid-request.
    if (resultIdOf(name) === undefined && progressIdOf(name) === undefined) continue;
    const path = join(dir, name);
    try {
      // lstat: a link's own age, never that of what it points to.
      if ((await lstat(path)).mtimeMs < cutoff) await removeFileDurably(path);
    } catch (err) {
      // Gone meanwhile (a CLI took it): nothing to clean.
      if (errnoCode(err) !== 'ENOENT') {
        logger.warn({ path, err: errorMessage(err) }, 'cannot remove stale renewal result');
      }
    }
  }
}
