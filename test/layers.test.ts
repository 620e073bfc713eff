import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import t from 'tap';

// DESIGN.md's layers, top first: a folder may import only from folders before it.
// observability is placed before cli because cli is the wiring that starts it.
const layers = [
  'api',
  'pki',
  'store',
  'issuer',
  'certificates',
  'volume',
  'renewal',
  'driver',
  'observability',
  'cli',
];

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name));
}

t.test('every src import points to the same layer or one above it', async (t) => {
  const root = new URL('../src/', import.meta.url).pathname;
  const files = await sourceFiles(root);
  t.ok(files.length > 10, 'source files were found');
  const violations: string[] = [];
  for (const file of files) {
    const layer = relative(root, file).split('/')[0] ?? '';
    const rank = layers.indexOf(layer);
    if (rank < 0) {
      violations.push(`${relative(root, file)}: folder "${layer}" is not a known layer`);
      continue;
    }
    const text = await readFile(file, 'utf8');
    for (const match of text.matchAll(/from '(\.\.\/[^']+)'/g)) {
      const target = relative(root, join(file, '..', match[1] ?? '')).split('/')[0] ?? '';
      const targetRank = layers.indexOf(target);
      if (targetRank > rank) {
        violations.push(
          `${relative(root, file)} imports ${match[1]} (${target} is below ${layer})`,
        );
      }
    }
  }
  t.same(violations, []);
});
