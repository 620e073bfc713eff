import { stat } from 'node:fs/promises';

/** True when path exists and is a directory (a data root or state dir a command is pointed at). */
export function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
}
