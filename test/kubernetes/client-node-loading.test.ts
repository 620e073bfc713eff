import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import t from 'tap';
import { clientNode, KubeConfig } from '../../src/store/kubernetes/client-node.js';
import { projectPath } from '../support/project-files.js';

// src/store/kubernetes/client-node.ts loads @kubernetes/client-node with require(), because an
// ES import of it costs ~4 s of CPU per process under tap's module hook and in every plugin or
// controller child. One value import anywhere (a test file included: its static imports are
// loaded before any code runs) brings that cost back, silently.

const OWNER = 'src/store/kubernetes/client-node.ts';
/** This test compares the two ways of loading on purpose. */
const THIS_TEST = 'test/kubernetes/client-node-loading.test.ts';
const STATIC_IMPORT = /(?:import|export)\s+(type\s+)?[^;]*?from\s+'@kubernetes\/client-node'/gs;
const DYNAMIC_IMPORT = /import\(\s*'@kubernetes\/client-node'\s*\)/;

async function sourcesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(projectPath(dir), { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

t.test(
  'only client-node.ts loads @kubernetes/client-node; other files import its types',
  async (t) => {
    const files = [
      ...(await sourcesUnder('src')),
      ...(await sourcesUnder('test')),
      ...(await sourcesUnder('bench')),
    ];
    const valueImports: string[] = [];
    let typeImports = 0;
    for (const path of files) {
      const file = relative(projectPath(), path);
      if (file === OWNER || file === THIS_TEST) continue;
      const source = await readFile(path, 'utf8');
      for (const match of source.matchAll(STATIC_IMPORT)) {
        if (match[1]) typeImports += 1;
        else valueImports.push(`${file}: ${match[0]}`);
      }
      if (DYNAMIC_IMPORT.test(source))
        valueImports.push(`${file}: import('@kubernetes/client-node')`);
    }
    t.same(valueImports, []);
    t.ok(typeImports >= 5, `the scan sees the type imports (${typeImports})`);
  },
);

t.test('a class loaded through require() is the one an ES import gives', async (t) => {
  const imported = await import('@kubernetes/client-node');
  t.equal(KubeConfig, imported.KubeConfig);
  t.equal(clientNode.CoreV1Api, imported.CoreV1Api);
  t.ok(new KubeConfig() instanceof imported.KubeConfig);
});
