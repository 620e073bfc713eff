import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import t from 'tap';
import { projectPath } from '../support/project-files.js';

const SRC = projectPath('src');

async function importsOf(dir: string): Promise<Array<{ file: string; target: string }>> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  const found: Array<{ file: string; target: string }> = [];
  for (const entry of entries) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const path = join(entry.parentPath, entry.name);
    const source = await readFile(path, 'utf8');
    for (const match of source.matchAll(/from '([^']+)'/g)) {
      found.push({ file: relative(SRC, path), target: match[1] as string });
    }
  }
  return found;
}

// The store's interface, memory backend, informer and work queue are plain mechanisms: no
// file, network or Kubernetes client. Only its backends touch the world: kubernetes/ talks to a
// cluster, state-directory/ implements the persistence port on files.
t.test(
  'src/store outside its backends (kubernetes/, state-directory/) imports only store, api, base and pure Node modules',
  async (t) => {
    const backends = ['store/kubernetes/', 'store/state-directory/'];
    const imports = (await importsOf(join(SRC, 'store'))).filter(
      ({ file }) => !backends.some((backend) => file.startsWith(backend)),
    );
    t.ok(imports.length > 20);
    const pureNode = new Set(['node:crypto', 'node:util']);
    for (const { file, target } of imports) {
      const allowed =
        pureNode.has(target) ||
        target.startsWith('./') ||
        target.startsWith('../api/') ||
        target.startsWith('../base/');
      t.ok(allowed, `${file} imports ${target}`);
    }
  },
);

t.test(
  'only the store/kubernetes backend and the cli wiring use the Kubernetes client',
  async (t) => {
    const all = await importsOf(SRC);
    const users = [
      ...new Set(all.filter((i) => i.target === '@kubernetes/client-node').map((i) => i.file)),
    ];
    t.ok(users.length > 0);
    for (const file of users) {
      t.ok(
        file.startsWith('store/kubernetes/') || file.startsWith('cli/'),
        `${file} imports @kubernetes/client-node`,
      );
    }
  },
);
