import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import t from 'tap';
import { projectPath } from './support/project-files.js';

// The layers, top first (docs/design.md): a folder may import only from its own layer or one
// before it. A nested folder listed here (store/kubernetes, admission/webhook) is a layer of its
// own, below its parent.
// observability is placed before cli because cli is the wiring that starts it.
const layers = [
  'api',
  'base',
  'pki',
  'fs',
  'store',
  'store/state-directory',
  'store/kubernetes',
  'controller',
  'issuer',
  'certificates',
  'admission',
  'admission/webhook',
  'attributes',
  'volume',
  'volume-manager',
  'driver',
  'observability',
  'cli',
];

/** The layer of a path relative to src/: the longest listed folder it lies in. */
function layerOf(path: string): string | undefined {
  return layers
    .filter((layer) => path === layer || path.startsWith(`${layer}/`))
    .sort((a, b) => b.length - a.length)[0];
}

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name));
}

t.test('layerOf picks the most specific layer', async (t) => {
  t.equal(layerOf('store/memory-store.ts'), 'store');
  t.equal(layerOf('store/kubernetes/kubernetes-store.ts'), 'store/kubernetes');
  t.equal(layerOf('storefront/x.ts'), undefined);
});

t.test('every src import points to the same layer or one above it', async (t) => {
  const root = projectPath('src');
  const files = await sourceFiles(root);
  t.ok(files.length > 10, 'source files were found');
  const violations: string[] = [];
  for (const file of files) {
    const layer = layerOf(relative(root, file));
    if (layer === undefined) {
      violations.push(`${relative(root, file)}: not in a known layer`);
      continue;
    }
    const rank = layers.indexOf(layer);
    const text = await readFile(file, 'utf8');
    for (const match of text.matchAll(/from '(\.\.?\/[^']+)'/g)) {
      const target = layerOf(relative(root, join(file, '..', match[1] ?? ''))) ?? '';
      if (layers.indexOf(target) > rank) {
        violations.push(
          `${relative(root, file)} imports ${match[1]} (${target} is below ${layer})`,
        );
      }
    }
  }
  t.same(violations, []);
});
