import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';

// src/store sits above everything but src/api: it may import only from there, Node, and
// the Kubernetes client its cluster backend is built on (DESIGN.md: "its backends").
const PACKAGES = new Set(['@kubernetes/client-node']);

t.test(
  'src/store imports only from src/store, src/api, node builtins and the Kubernetes client',
  async (t) => {
    const dir = join(import.meta.dirname, '..', '..', 'src', 'store');
    const files = (await readdir(dir)).filter((file) => file.endsWith('.ts'));
    t.ok(files.length > 5);
    for (const file of files) {
      const source = await readFile(join(dir, file), 'utf8');
      for (const match of source.matchAll(/from '([^']+)'/g)) {
        const target = match[1] as string;
        const allowed =
          target.startsWith('node:') ||
          target.startsWith('./') ||
          target.startsWith('../api/') ||
          PACKAGES.has(target);
        t.ok(allowed, `${file} imports ${target}`);
      }
    }
  },
);
