import { createHash } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { readdir, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { KubeObject } from '../../api/meta.js';
import { type Clock, systemClock } from '../../base/clock.js';
import { errorMessage } from '../../base/error-message.js';
import {
  ensureDirDurably,
  isAtomicTempFile,
  removeFileDurably,
  renameDurably,
  writeFileAtomic,
} from '../../fs/atomic-file.js';
import { byteSizeText, RefusedFileError, readRegularFile } from '../../fs/regular-file.js';
import { type FileOps, fileOpsFor } from '../../fs/volatile-fs.js';
import { StoreError } from '../errors.js';
import { parseResourceVersion } from '../resource-version.js';
import type {
  CorruptFileHandler,
  LoadedState,
  ObjectLocation,
  StatePersistence,
  StoredObject,
} from '../state-persistence.js';

/**
 * The largest object file written and read back. The API server takes no request body over
 * 3 MiB and etcd no value over 1.5 MiB; written indented, an object takes some more.
 */
export const STATE_OBJECT_MAX_BYTES = 16 * 1024 * 1024;
// The resourceVersion counter: one decimal number.
const COUNTER_MAX_BYTES = 1024;

const CORE_GROUP_DIR = 'core';
const CLUSTER_SCOPE_DIR = '_cluster';
const COUNTER_FILE = 'resource-version';
const OBJECT_SUFFIX = '.json';
// Names may be 253 characters but file names only 255 bytes, so long names are stored under
// a hash; '_' cannot occur in an object name, so the two forms never collide.
const MAX_PLAIN_NAME_LENGTH = 200;
const HASHED_NAME_PREFIX = '_sha256-';

/**
 * A state directory holding one JSON file per object,
 * `<dir>/<group or core>/<plural>/<namespace or _cluster>/<name>.json`, and the
 * resourceVersion counter in `<dir>/resource-version`. Every write is atomic and durable.
 */
export class StateDirectory implements StatePersistence {
  private readonly knownDirs = new Set<string>();
  private counterTarget = 0;
  private counterWritten = 0;
  private counterWrite: Promise<void> | undefined;
  // The flavour of the whole tree, settled by load(): nothing is mounted below the root, and
  // asking it of every write (an lstat and a statfs) was about 2 % of a renewal storm's work.
  private settledOps: FileOps | undefined;

  private readonly clock: Clock;
  private readonly onCorrupt: CorruptFileHandler | undefined;

  constructor(
    readonly root: string,
    options: { clock?: Clock; onCorrupt?: CorruptFileHandler } = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.onCorrupt = options.onCorrupt;
  }

  /** The file that holds the object at location. */
  objectPath(location: ObjectLocation): string {
    return join(this.dirOf(location), fileNameOf(location.name));
  }

  /** Reads every object and the counter; unreadable files are moved aside and reported. */
  async load(): Promise<LoadedState> {
    await ensureDirDurably(this.root);
    this.settledOps = fileOpsFor(this.root);
    const objects: StoredObject[] = [];
    let resourceVersion = await this.loadCounter();
    for (const groupDir of await subdirectories(this.root)) {
      const group = groupDir === CORE_GROUP_DIR ? '' : groupDir;
      for (const plural of await subdirectories(join(this.root, groupDir))) {
        for (const namespaceDir of await subdirectories(join(this.root, groupDir, plural))) {
          const namespace = namespaceDir === CLUSTER_SCOPE_DIR ? undefined : namespaceDir;
          const dir = join(this.root, groupDir, plural, namespaceDir);
          // On tmpfs synchronous calls: a thread-pool round trip per open, fstat, read and close
          // of thousands of small files cost more than the reads themselves (see volatile-fs.ts).
          const ops = fileOpsFor(dir);
          const loaded = await Promise.all(
            (await ops.readdir(dir)).map((file) =>
              this.loadObject(ops, dir, file, group, plural, namespace),
            ),
          );
          for (const stored of loaded) {
            if (!stored) continue;
            objects.push(stored);
            const rv = parseResourceVersion(stored.object.metadata.resourceVersion ?? '0');
            resourceVersion = Math.max(resourceVersion, rv);
          }
        }
      }
    }
    this.counterTarget = resourceVersion;
    this.counterWritten = resourceVersion;
    return { objects, resourceVersion };
  }

  /**
   * The object stored at location, or undefined when there is none. Read-only: nothing is
   * moved aside or created, so another process (the plugin owning the dir) is undisturbed;
   * writes are atomic renames, so the file read is always a whole version. Throws when the
   * file cannot be parsed.
   */
  async readObject(location: ObjectLocation): Promise<KubeObject | undefined> {
    const path = this.objectPath(location);
    let text: string;
    try {
      text = await readObjectFile(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw unreadable(path, err);
    }
    try {
      return parseStoredObject(text);
    } catch (err) {
      throw new StoreError('InternalError', `unreadable state file ${path}: ${errorMessage(err)}`);
    }
  }

  /**
   * Every object stored under a group, plural and namespace (undefined: cluster-scoped), in
   * file-name order; read-only as readObject. Temp files, set-aside files and files removed
   * while reading are skipped; a file that cannot be parsed throws.
   */
  async readObjects(location: Omit<ObjectLocation, 'name'>): Promise<KubeObject[]> {
    const dir = this.dirOf({ ...location, name: '' });
    let files: string[];
    try {
      files = (await readdir(dir)).sort();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const objects: KubeObject[] = [];
    for (const file of files) {
      if (isAtomicTempFile(file) || !file.endsWith(OBJECT_SUFFIX)) continue;
      const path = join(dir, file);
      let text: string;
      try {
        text = await readObjectFile(path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw unreadable(path, err);
      }
      try {
        objects.push(parseStoredObject(text));
      } catch (err) {
        throw new StoreError(
          'InternalError',
          `unreadable state file ${path}: ${errorMessage(err)}`,
        );
      }
    }
    return objects;
  }

  /**
   * The namespaces holding objects of a namespaced group and plural, sorted (their dirs; a name
   * that is no namespace, such as a stray file, is skipped).
   */
  async namespacesOf(location: Pick<ObjectLocation, 'group' | 'plural'>): Promise<string[]> {
    const dir = dirname(this.dirOf({ ...location, namespace: undefined, name: '' }));
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    return entries
      .filter((e) => e.isDirectory() && e.name !== CLUSTER_SCOPE_DIR)
      .map((e) => e.name)
      .sort();
  }

  /** Writes obj durably at location, replacing the previous state. */
  async writeObject(location: ObjectLocation, obj: KubeObject): Promise<void> {
    const text = `${JSON.stringify(obj, null, 2)}\n`;
    // What a load would refuse is never written: the store's write fails instead.
    const bytes = Buffer.byteLength(text);
    if (bytes > STATE_OBJECT_MAX_BYTES) {
      throw new Error(
        `the object is ${bytes} bytes as stored, more than the ${byteSizeText(STATE_OBJECT_MAX_BYTES)} a state file may have`,
      );
    }
    const dir = this.dirOf(location);
    if (!this.knownDirs.has(dir)) {
      await ensureDirDurably(dir);
      this.knownDirs.add(dir);
    }
    await writeFileAtomic(this.objectPath(location), text, undefined, this.opsFor(dir));
  }

  /** Removes the object's file durably (a missing file is fine). */
  async removeObject(location: ObjectLocation): Promise<void> {
    const path = this.objectPath(location);
    await removeFileDurably(path, this.opsFor(dirname(path)));
  }

  // Before load() (a reader of another process's dir) each dir is asked as before.
  private opsFor(dir: string): FileOps {
    return this.settledOps ?? fileOpsFor(dir);
  }

  /**
   * Makes the saved counter at least rv. Concurrent calls share writes: each resolves once a
   * write of a value at least as large is durable.
   */
  async saveResourceVersion(rv: number): Promise<void> {
    this.counterTarget = Math.max(this.counterTarget, rv);
    while (this.counterWritten < rv) {
      this.counterWrite ??= this.writeCounter();
      await this.counterWrite;
    }
  }

  private async writeCounter(): Promise<void> {
    const value = this.counterTarget;
    try {
      await writeFileAtomic(
        join(this.root, COUNTER_FILE),
        `${value}\n`,
        undefined,
        this.opsFor(this.root),
      );
      this.counterWritten = Math.max(this.counterWritten, value);
    } finally {
      this.counterWrite = undefined;
    }
  }

  private dirOf(location: ObjectLocation): string {
    return join(
      this.root,
      location.group === '' ? CORE_GROUP_DIR : location.group,
      location.plural,
      location.namespace ?? CLUSTER_SCOPE_DIR,
    );
  }

  private async loadCounter(): Promise<number> {
    const path = join(this.root, COUNTER_FILE);
    let text: string;
    try {
      text = (await readRegularFile(path, { maxBytes: COUNTER_MAX_BYTES })).toString('utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      // Something that is not a file is in the way, or a file far too large: corrupt, not
      // fatal. Other errors (permissions, I/O) are real problems and stop the load.
      if (!(err instanceof RefusedFileError)) throw err;
      await this.moveAside(path, `it ${err.problem}`);
      return 0;
    }
    try {
      return parseResourceVersion(text.trim());
    } catch (err) {
      await this.moveAside(path, (err as Error).message);
      return 0;
    }
  }

  private async loadObject(
    ops: FileOps,
    dir: string,
    file: string,
    group: string,
    plural: string,
    namespace: string | undefined,
  ): Promise<StoredObject | undefined> {
    const path = join(dir, file);
    if (isAtomicTempFile(file)) {
      // A write that a crash interrupted; the previous state is still in place.
      await unlink(path).catch(() => undefined);
      return undefined;
    }
    if (!file.endsWith(OBJECT_SUFFIX)) return undefined;
    let object: KubeObject;
    try {
      // A FIFO or a link here is refused without blocking and set aside like a corrupt file.
      object = parseStoredObject(
        (await ops.readFile(path, STATE_OBJECT_MAX_BYTES)).toString('utf8'),
      );
      if (fileNameOf(object.metadata.name) !== file) {
        throw new Error(`metadata.name "${object.metadata.name}" does not match the file name`);
      }
      if (object.metadata.namespace !== namespace) {
        throw new Error(
          `metadata.namespace "${object.metadata.namespace ?? ''}" does not match the directory`,
        );
      }
    } catch (err) {
      const reason = err instanceof RefusedFileError ? `it ${err.problem}` : (err as Error).message;
      await this.moveAside(path, reason);
      return undefined;
    }
    return { location: { group, plural, namespace, name: object.metadata.name }, object };
  }

  private async moveAside(path: string, reason: string): Promise<void> {
    const stamp = new Date(this.clock.now()).toISOString().replace(/[:.]/g, '-');
    const movedTo = `${path}.corrupt-${stamp}`;
    await renameDurably(path, movedTo);
    this.onCorrupt?.(
      new StoreError('InternalError', `corrupt state file ${path} moved to ${movedTo}: ${reason}`),
      path,
      movedTo,
    );
  }
}

// Only a regular file of at most STATE_OBJECT_MAX_BYTES (see regular-file.ts).
async function readObjectFile(path: string): Promise<string> {
  return (await readRegularFile(path, { maxBytes: STATE_OBJECT_MAX_BYTES })).toString('utf8');
}

// A file the reader refused becomes the store's error, naming it; other errors stay as they are.
function unreadable(path: string, err: unknown): unknown {
  if (!(err instanceof RefusedFileError)) return err;
  return new StoreError('InternalError', `unreadable state file ${path}: it ${err.problem}`);
}

function fileNameOf(name: string): string {
  if (name.length <= MAX_PLAIN_NAME_LENGTH) return `${name}${OBJECT_SUFFIX}`;
  return `${HASHED_NAME_PREFIX}${createHash('sha256').update(name).digest('hex')}${OBJECT_SUFFIX}`;
}

function parseStoredObject(text: string): KubeObject {
  const value: unknown = JSON.parse(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error('not a JSON object');
  }
  const metadata = (value as { metadata?: unknown }).metadata;
  if (typeof metadata !== 'object' || metadata === null) throw new Error('no metadata');
  const { name, resourceVersion } = metadata as { name?: unknown; resourceVersion?: unknown };
  if (typeof name !== 'string' || name === '') throw new Error('no metadata.name');
  if (typeof resourceVersion !== 'string') throw new Error('no metadata.resourceVersion');
  parseResourceVersion(resourceVersion);
  return value as KubeObject;
}

async function subdirectories(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  return entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}
