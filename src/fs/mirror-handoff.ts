import { LRUCache } from 'lru-cache';

// A volume's new generation is copied to its direct-mode target a moment after it is written
// (the publish's mount, the renewal's refresh): the writer hands its bytes to that copy instead
// of the copy reading the four files back. Held for that one copy and a few seconds at most, so
// keys do not linger in memory; bounded in entries and bytes (a file may have 16 MiB).
const HELD_MS = 5_000;
const MAX_ENTRIES = 64;
const MAX_BYTES = 8 * 1024 * 1024;

interface Handoff {
  generation: string;
  files: ReadonlyMap<string, Uint8Array>;
}

const held = new LRUCache<string, Handoff>({
  max: MAX_ENTRIES,
  maxSize: MAX_BYTES,
  sizeCalculation: ({ files }) => {
    let bytes = 1;
    for (const content of files.values()) bytes += content.byteLength;
    return bytes;
  },
  ttl: HELD_MS,
  ttlAutopurge: true,
});

/**
 * Holds copies of the files just written as generation into dir (the writer's buffers stay the
 * caller's), for the next takeHandoff of dir.
 */
export function holdForMirror(
  dir: string,
  generation: string,
  files: Iterable<readonly [string, Uint8Array]>,
): void {
  const copies = new Map<string, Uint8Array>();
  for (const [name, content] of files) copies.set(name, Uint8Array.prototype.slice.call(content));
  held.set(dir, { generation, files: copies });
}

/** The generation whose files are held for dir, if any; nothing is let go. */
export function heldGeneration(dir: string): string | undefined {
  return held.peek(dir)?.generation;
}

/**
 * The files held for dir when they are those of generation, as Buffers; whatever was held for
 * dir is let go either way (one copy per write). A generation's name is unique to the process
 * that wrote it (uniqueSuffix) and its files are never rewritten after its swap, so a dir whose
 * `..data` still names it holds these bytes.
 */
export function takeHandoff(dir: string, generation: string): Map<string, Buffer> | undefined {
  const entry = held.get(dir);
  if (entry === undefined) return undefined;
  held.delete(dir);
  if (entry.generation !== generation) return undefined;
  const files = new Map<string, Buffer>();
  // The copies made by holdForMirror, no longer held here: handed over without another.
  for (const [name, content] of entry.files) {
    files.set(name, Buffer.from(content.buffer, content.byteOffset, content.byteLength));
  }
  return files;
}

/** Lets go of what is held for dir (its files were removed). */
export function dropHandoff(dir: string): void {
  held.delete(dir);
}
