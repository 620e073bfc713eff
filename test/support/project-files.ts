import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// npm test runs the JavaScript that tsc emits into build/ (one compile for the whole suite,
// instead of a TypeScript loader transpiling every file again in each test process); a test
// file can also run as TypeScript under a loader (`node --import tsx test/x.test.ts`). Paths to
// the project's own files and to scripts run as child processes come from here, so they are
// right in both forms.

const here = fileURLToPath(import.meta.url);

/** True when this process runs the JavaScript emitted into build/, false under a TS loader. */
export const compiled = here.endsWith('.js');

/** The root of the tree this code lies in: build/ when compiled, else the project root. */
const codeRoot = resolve(dirname(here), '..', '..');

/** The project root: package.json, src/, deploy/ (build/ sits right below it, see tsconfig.json). */
export const projectRoot = compiled ? dirname(codeRoot) : codeRoot;

/** A path below the project root, for reading the project's own files (sources, manifests). */
export function projectPath(...segments: string[]): string {
  return join(projectRoot, ...segments);
}

/**
 * A TypeScript file of the project, given from the project root (`src/cli/main.ts`), in the
 * form this process runs: its emitted .js under build/ when compiled, the .ts itself otherwise.
 */
export function runnablePath(tsPath: string): string {
  return compiled ? join(codeRoot, tsPath.replace(/\.ts$/, '.js')) : join(projectRoot, tsPath);
}

/**
 * A script next to the caller (pass its import.meta.url), named by its .ts source
 * (`./fixtures/x.ts`), in the form the caller runs: the emitted .js when the caller is.
 */
export function scriptBeside(callerUrl: string, tsPath: string): string {
  const path = fileURLToPath(new URL(tsPath, callerUrl));
  return callerUrl.endsWith('.js') ? path.replace(/\.ts$/, '.js') : path;
}

/**
 * The node arguments that run script: none for JavaScript (tap's processinfo hook still reaches
 * the child through NODE_OPTIONS, so under a coverage run the child's coverage counts, mapped
 * to the .ts sources through tsc's source maps); for TypeScript, this process's loader
 * arguments, or tsx when it has none.
 */
export function nodeArgsFor(script: string): string[] {
  if (!script.endsWith('.ts')) return [];
  const own = process.execArgv.filter((a) => a.startsWith('--import') || a.startsWith('--loader'));
  return own.length > 0 ? process.execArgv : ['--import', 'tsx'];
}

// t.mockImport resolves relative paths against the caller's source file (through the source
// map: test/x/y.test.ts, not build/test/x/y.test.js), so mocks name modules by absolute URL.

/** The file URL of a project module given by its .ts path, to load with t.mockImport. */
export function moduleFileUrl(tsPath: string): string {
  return pathToFileURL(runnablePath(tsPath)).href;
}

/**
 * The URL other modules import a project module by (given by its .ts path), as a t.mockImport
 * mock key: the emitted .js when compiled; under a TS loader, the .js specifier of the source.
 */
export function importedUrl(tsPath: string): string {
  return pathToFileURL(runnablePath(tsPath).replace(/\.ts$/, '.js')).href;
}
