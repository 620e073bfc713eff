/** How a volume's files reach the pod's target path. */
export interface Mounter {
  readonly mode: 'bind' | 'direct';
  /** Prepares the data root (bind mode: on a tmpfs unless the medium is disk). */
  prepareDataRoot(root: string): Promise<void>;
  /**
   * Refuses (TargetPathError) a target the volume must not be published at: a symlink or a path
   * under one, not a directory, a mount of anything but dataDir, or a non-empty dir holding
   * files the volume did not write. recorded: the volume's metadata.json names this target, so
   * atomic-writer files in it are its own. Reads only; run before anything is issued.
   */
  checkTarget(dataDir: string, targetPath: string, recorded: boolean): Promise<void>;
  /**
   * Makes the volume's files visible at targetPath: a read-only bind mount of dataDir, or in
   * direct mode a mirror of its current files. Idempotent: an existing mount of the same source
   * is success. Checks the target again first (checkTarget, recorded), against a race.
   */
  publish(dataDir: string, targetPath: string): Promise<void>;
  /** Called after each new generation was written into dataDir; direct mode mirrors the files into targetPath with writeAtomically; bind mode does nothing. */
  refresh(dataDir: string, targetPath: string, gid?: number): Promise<void>;
  /**
   * Undoes publish at targetPath: unmounts every mount of dataDir there (never another mount:
   * TargetPathError) and, when owned (the volume's recorded target), removes the mirrored files
   * and the dir if empty. Success when targetPath does not exist; a symlinked target is refused.
   */
  unpublish(dataDir: string, targetPath: string, owned: boolean): Promise<void>;
}
