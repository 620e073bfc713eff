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

/** The import circles of a file graph: its strongly connected parts of more than one file. */
function circlesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  // Tarjan's algorithm: one depth-first pass; a file whose lowest reachable index is its own
  // closes a part. The graph is small (hundreds of files), so recursion depth is no concern.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, index.size);
    low.set(file, index.get(file) as number);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file) as number, low.get(next) as number));
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file) as number, index.get(next) as number));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const part: string[] = [];
    let member: string;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      part.push(member);
    } while (member !== file);
    if (part.length > 1) circles.push(part.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return circles;
}

t.test('circlesOf finds every circle and nothing else', async (t) => {
  const cases: Array<{ name: string; graph: Record<string, string[]>; circles: string[][] }> = [
    { name: 'a chain', graph: { a: ['b'], b: ['c'], c: [] }, circles: [] },
    { name: 'two files', graph: { a: ['b'], b: ['a'] }, circles: [['a', 'b']] },
    {
      name: 'a circle of three beside a tail',
      graph: { a: ['b'], b: ['c'], c: ['a', 'd'], d: [] },
      circles: [['a', 'b', 'c']],
    },
    { name: 'an import of a file outside src', graph: { a: ['x'] }, circles: [] },
    {
      name: 'two separate circles',
      graph: { a: ['b'], b: ['a'], c: ['d'], d: ['c'] },
      circles: [
        ['a', 'b'],
        ['c', 'd'],
      ],
    },
  ];
  for (const { name, graph, circles } of cases) {
    t.same(circlesOf(new Map(Object.entries(graph))), circles, name);
  }
});

// A circle makes two files one idea in two places: neither can be read, tested or moved alone.
// Type-only imports count (they tie the concepts just as much), and so do lazy import()s.
t.test('no two src files import each other, directly or through others', async (t) => {
  const root = projectPath('src');
  const graph = new Map<string, string[]>();
  for (const file of await sourceFiles(root)) {
    const text = await readFile(file, 'utf8');
    const targets = [
      ...text.matchAll(/(?:import|export)\s[^'"]*?from\s+'(\.\.?\/[^']+)'/g),
      ...text.matchAll(/import\(\s*'(\.\.?\/[^']+)'\s*\)/g),
    ].map((match) => relative(root, join(file, '..', (match[1] ?? '').replace(/\.js$/, '.ts'))));
    graph.set(relative(root, file), targets);
  }
  t.ok(graph.size > 10, 'source files were found');
  t.same(circlesOf(graph), []);
});
