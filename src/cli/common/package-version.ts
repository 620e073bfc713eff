import { readFileSync } from 'node:fs';

/** The version in package.json (src/cli/common and dist/cli/common are both three levels down). */
export function packageVersion(): string {
  const parsed: unknown = JSON.parse(
    readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'),
  );
  return typeof parsed === 'object' && parsed !== null && 'version' in parsed
    ? String(parsed.version)
    : 'unknown';
}
