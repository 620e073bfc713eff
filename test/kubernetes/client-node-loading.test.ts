import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import t from 'tap';
import * as product from '../../src/store/kubernetes/client-node.js';
import { CoreV1Api, KubeConfig } from '../../src/store/kubernetes/client-node.js';
import { clientNode } from '../support/client-node-full.js';
import { projectPath } from '../support/project-files.js';

// src/store/kubernetes/client-node.ts loads the classes the product uses from the build's bundle
// of @kubernetes/client-node, and test/support/client-node-full.ts the whole package with
// require(), because an ES import of it costs ~4 s of CPU per process under tap's module hook and
// in every plugin or controller child. One value import anywhere else (a test file included: its
// static imports are loaded before any code runs) brings that cost back, silently.

const OWNERS = ['src/store/kubernetes/client-node.ts', 'test/support/client-node-full.ts'];
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
      if (OWNERS.includes(file) || file === THIS_TEST) continue;
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

t.test(
  'the product runs the bundle the build wrote, and it works as the package does',
  async (t) => {
    const bundle = new URL('../../src/store/kubernetes/client-node.bundle.cjs', import.meta.url);
    t.ok(existsSync(bundle), 'the build wrote the bundle beside the compiled client-node.js');
    const loaded = createRequire(import.meta.url)(bundle.pathname) as Record<string, unknown>;
    t.equal(KubeConfig, loaded.KubeConfig, "the classes are the bundle's");
    t.not(KubeConfig, clientNode.KubeConfig, "not the package's");
    t.same(
      Object.keys(product).sort(),
      [
        'ApiException',
        'ApisApi',
        'CoreV1Api',
        'CustomObjectsApi',
        'KubeConfig',
        'Observable',
        'Watch',
      ],
      'only what the product uses',
    );
    // tools/bundle-client-node.sh names the classes again: one added to client-node.ts alone
    // would be undefined at run time whatever its type says.
    t.same(
      Object.keys(loaded).sort(),
      Object.keys(product).sort(),
      'the bundle holds each of them',
    );
    for (const [name, value] of Object.entries(product)) t.type(value, 'function', name);
    const config = {
      clusters: [{ name: 'c', server: 'https://127.0.0.1:6443', skipTLSVerify: false }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u', namespace: 'ns' }],
      currentContext: 'x',
    };
    const ours = new KubeConfig();
    ours.loadFromOptions(config);
    const theirs = new clientNode.KubeConfig();
    theirs.loadFromOptions(config);
    t.equal(ours.exportConfig(), theirs.exportConfig(), 'the same kubeconfig reads the same');
    t.equal(typeof ours.makeApiClient(CoreV1Api).listNamespacedPod, 'function');
  },
);
