// bin/cert-csi.js, the command of a clone (`npx cert-csi`, `npm start`): it compiles only when
// dist/ is missing or older than a source, and otherwise runs dist/ at once. Run on a copy of
// the shim in a made-up project whose compiler is a stand-in that records its calls, so each
// case costs one small node process instead of a real compile.
import { execFile } from 'node:child_process';
import { cp, mkdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { projectPath } from '../support/project-files.js';
import { tempDir } from '../support/temp-dir.js';

const run = promisify(execFile);

/** A project with the shim, a src/ file, the stand-in compiler and (unless told) a built dist/. */
async function project(t: Parameters<typeof tempDir>[0], options: { built?: boolean } = {}) {
  const root = await tempDir(t, 'cert-csi-shim-');
  await mkdir(join(root, 'bin'));
  await cp(projectPath('bin', 'cert-csi.js'), join(root, 'bin', 'cert-csi.js'));
  await writeFile(join(root, 'package.json'), '{"type":"module"}\n');
  await mkdir(join(root, 'src'));
  await writeFile(join(root, 'src', 'main.ts'), 'export {};\n');
  await writeFile(join(root, 'tsconfig.json'), '{}\n');
  await writeFile(join(root, 'tsconfig.build.json'), '{}\n');
  const main = "console.log('ran', JSON.stringify(process.argv.slice(2)));\n";
  // The stand-in for tsc -b: records the call, fails when told to, else writes dist/.
  const compiler = join(root, 'node_modules', 'typescript', 'bin');
  await mkdir(compiler, { recursive: true });
  await mkdir(join(root, 'node_modules', '.cache', 'cert-csi'), { recursive: true });
  // CommonJS, as typescript's own bin is (an extensionless ES module trips tap's require hook).
  await writeFile(
    join(root, 'node_modules', 'typescript', 'package.json'),
    '{"type":"commonjs"}\n',
  );
  await writeFile(
    join(compiler, 'tsc'),
    `const { appendFileSync, existsSync, mkdirSync, writeFileSync } = require('node:fs');
const root = ${JSON.stringify(root)};
appendFileSync(root + '/tsc-calls', process.argv.slice(2).join(' ') + '\\n');
if (existsSync(root + '/fail')) { console.error('src/main.ts: error'); process.exit(2); }
mkdirSync(root + '/dist/cli', { recursive: true });
writeFileSync(root + '/dist/cli/main.js', ${JSON.stringify(main)});
`,
  );
  if (options.built !== false) {
    await mkdir(join(root, 'dist', 'cli'), { recursive: true });
    await writeFile(join(root, 'dist', 'cli', 'main.js'), main);
    await writeFile(join(root, 'node_modules', '.cache', 'cert-csi', 'dist.built'), '');
    // Sources older than the last build, as after a build.
    const past = new Date(Date.now() - 60_000);
    for (const p of ['src/main.ts', 'src', 'tsconfig.json', 'tsconfig.build.json']) {
      await utimes(join(root, p), past, past);
    }
  }
  return root;
}

async function shim(root: string, args: string[] = ['version']) {
  try {
    const { stdout, stderr } = await run(process.execPath, [
      join(root, 'bin', 'cert-csi.js'),
      ...args,
    ]);
    return { code: 0, stdout, stderr };
  } catch (err) {
    const failed = err as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

const calls = (root: string) =>
  readFile(join(root, 'tsc-calls'), 'utf8').then(
    (text) => text.split('\n').filter(Boolean).length,
    () => 0,
  );

t.test('a fresh clone: dist/ is built once, then used as it is', async (t) => {
  const root = await project(t, { built: false });
  const first = await shim(root, ['--help']);
  t.equal(first.code, 0, 'runs');
  t.match(first.stdout, 'ran ["--help"]', 'dist/cli/main.js got the arguments');
  t.match(first.stderr, 'compiling src/ into dist/', 'says why it waits');
  t.equal(await calls(root), 1, 'compiled once');
  t.match(
    await readFile(join(root, 'tsc-calls'), 'utf8'),
    `-b ${join(root, 'tsconfig.build.json')}`,
  );
  const second = await shim(root);
  t.equal(second.code, 0, 'runs again');
  t.equal(second.stderr, '', 'silently');
  t.equal(await calls(root), 1, 'without compiling');
});

t.test('an up-to-date dist/ runs without a compile', async (t) => {
  const root = await project(t);
  const result = await shim(root);
  t.equal(result.code, 0);
  t.equal(await calls(root), 0, 'no compile');
});

t.test('a source or a compiler setting newer than the last build compiles again', async (t) => {
  for (const changed of ['src/main.ts', 'tsconfig.build.json']) {
    const root = await project(t);
    const now = new Date();
    await utimes(join(root, changed), now, now);
    const result = await shim(root);
    t.equal(result.code, 0, `${changed}: runs`);
    t.equal(await calls(root), 1, `${changed}: compiled first`);
  }
});

t.test('a failed compile stops with its status and does not run dist/', async (t) => {
  const root = await project(t, { built: false });
  await writeFile(join(root, 'fail'), '');
  const result = await shim(root);
  t.equal(result.code, 2, "the compiler's exit status");
  t.notMatch(result.stdout, 'ran', 'dist/ did not run');
  t.match(result.stderr, 'src/main.ts: error', "the compiler's message is shown");
  t.match(result.stderr, 'the build failed', 'and what failed');
});

t.test('an installed package (no src/ or no compiler) runs what it ships', async (t) => {
  const root = await project(t);
  await rm(join(root, 'src'), { recursive: true });
  const now = new Date();
  await utimes(join(root, 'tsconfig.json'), now, now);
  t.equal((await shim(root)).code, 0, 'without src/');
  const noCompiler = await project(t);
  await rm(join(noCompiler, 'node_modules', 'typescript'), { recursive: true });
  await utimes(join(noCompiler, 'src', 'main.ts'), now, now);
  t.equal((await shim(noCompiler)).code, 0, 'without the compiler');
  t.equal(await calls(root), 0, 'nothing compiled');
  const missing = await project(t, { built: false });
  await rm(join(missing, 'node_modules', 'typescript'), { recursive: true });
  const result = await shim(missing);
  t.equal(result.code, 1, 'no dist/ and no way to build it');
  t.match(result.stderr, 'is missing: run npm ci && npm run build', 'says what to do');
});
