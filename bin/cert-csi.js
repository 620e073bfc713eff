#!/usr/bin/env node
// The `cert-csi` command of a clone (package.json `bin`, so `npx cert-csi`, `npm start` and
// `npm link` all run it): it compiles src/ into dist/ when dist/ is missing or older than a
// source, then runs dist/cli/main.js. Without this, `npx cert-csi` fails after `npm ci` (no
// dist/ yet) or runs code older than the checkout. The check is a walk of mtimes (a few ms);
// the build is `npm run build` (`tsc -b`, incremental: about 5 s of CPU after one edit). It
// is plain JavaScript because it must run before anything is compiled.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const entry = join(root, 'dist', 'cli', 'main.js');
// Touched after each build this shim ran: its mtime is when dist/ was last brought up to
// date. (Not tsc's own tsbuildinfo: a `tsc --noEmit` with the build config rewrites it.)
const builtStamp = join(root, 'node_modules', '.cache', 'cert-csi', 'dist.built');
const compiler = join(root, 'node_modules', 'typescript', 'bin', 'tsc');

/** The newest mtime (ms) of the files under `path`. */
function newestMtime(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const name of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, name)));
  return newest;
}

/** Whether dist/ is missing or older than src/ or the compiler settings. */
function distIsStale() {
  if (!existsSync(entry) || !existsSync(builtStamp)) return true;
  const inputs = ['src', 'tsconfig.json', 'tsconfig.build.json'].map((p) => join(root, p));
  const newestInput = Math.max(...inputs.map(newestMtime));
  return newestInput > statSync(builtStamp).mtimeMs;
}

// An installed package (no src/ or no compiler) runs what it ships.
if (existsSync(join(root, 'src')) && existsSync(compiler) && distIsStale()) {
  process.stderr.write('cert-csi: compiling src/ into dist/ (npm run build)\n');
  const build = spawnSync(process.execPath, [compiler, '-b', join(root, 'tsconfig.build.json')], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  // The rest of `npm run build`: the one-file Kubernetes client (src/store/kubernetes/client-node.ts
  // loads the package itself when it is missing, only slower).
  const bundler = join(root, 'tools', 'bundle-client-node.sh');
  const bundled =
    build.status === 0 && existsSync(bundler)
      ? spawnSync(bundler, [join(root, 'dist')], { stdio: ['ignore', 'inherit', 'inherit'] })
      : build;
  if (build.status !== 0 || bundled.status !== 0) {
    process.stderr.write('cert-csi: the build failed (above); fix it or run npm run build\n');
    process.exit((build.status || bundled.status) ?? 1);
  }
  writeFileSync(builtStamp, '');
}
if (!existsSync(entry)) {
  process.stderr.write(`cert-csi: ${entry} is missing: run npm ci && npm run build\n`);
  process.exit(1);
}
await import(pathToFileURL(entry).href);
