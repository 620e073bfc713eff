import { goTrimSpace } from '../base/go-text.js';

const NAME_MAX_BYTES = 255;

/**
 * The file cert-csi writes in every volume beside the certificate (its generation counter,
 * serial and validity; docs/reloading.md): no output file may take its name.
 */
export const GENERATION_FILENAME = 'generation.json';

// csi-driver's five rules, plus ours: not empty, `.`, NUL or `\`. Names starting
// with `..` are also where the atomic writer keeps its generations and `..data`.

/** Why a name cannot be a file directly inside the volume, one reason per broken rule. */
export function filenameProblems(name: string): string[] {
  const problems: string[] = [];
  if (name === '') problems.push('filename must not be empty');
  if (name === '.') problems.push("filename must not be '.'");
  if (name.startsWith('/')) problems.push('filename must not be an absolute path');
  if (name.startsWith('..')) problems.push("filename must not start with '..'");
  if (name.includes('/')) problems.push("filename must not include '/'");
  if (name === GENERATION_FILENAME) {
    problems.push(
      `filename must not be '${GENERATION_FILENAME}': cert-csi writes its own file there`,
    );
  }
  if (name.includes('\\')) problems.push("filename must not include '\\'");
  if (name.includes('\0')) problems.push('filename must not include NUL characters');
  // NAME_MAX counts bytes, as Go's len does.
  if (Buffer.byteLength(name, 'utf8') > NAME_MAX_BYTES) {
    problems.push('filename must be no longer than 255 characters');
  }
  if (name !== goTrimSpace(name)) {
    problems.push('filename must not include leading or trailing spaces');
  }
  return problems;
}
