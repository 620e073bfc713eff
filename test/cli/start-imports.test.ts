import { readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import t from 'tap';
import { projectPath } from '../support/project-files.js';

// Every `cert-csi node` and `cert-csi controller` start pays for the modules its command's
// static imports reach (a controller start is ~1.5 s of CPU, most of it module loading; the
// crash trials restart them dozens of times). Packages only some paths use are loaded at their
// first use: prom-client when metrics are served, yaml with --manifests, node-forge for a
// legacy PKCS#12 keystore, @peculiar/x509 at the first certificate or request built. One static import brings the cost back silently; this test follows
// the static imports from each command's module and names the packages they reach.

/** Packages no start loads unless it is asked for what needs them. */
const LOADED_ON_USE = ['prom-client', 'yaml', 'node-forge', '@peculiar/x509'];

// `import ... from '...'`, `export ... from '...'` and `import '...'`; `import type` and
// `export type` are erased (with verbatimModuleSyntax, `import { type A }` still loads).
const STATIC_IMPORT = /^\s*(?:import|export)\s+(type\s+)?(?:[^;'"]*?\s+from\s+)?'([^']+)';/gms;

/** The packages (bare specifiers) that the static imports reachable from entry load. */
async function packagesReached(entry: string): Promise<Set<string>> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const pending = [projectPath(entry)];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    const source = await readFile(file, 'utf8');
    for (const [, typeOnly, specifier = ''] of source.matchAll(STATIC_IMPORT)) {
      if (typeOnly) continue;
      if (specifier.startsWith('.')) {
        pending.push(join(dirname(file), specifier.replace(/\.js$/, '.ts')));
      } else if (!specifier.startsWith('node:')) {
        const [scope = '', name = ''] = specifier.split('/');
        packages.add(scope.startsWith('@') ? `${scope}/${name}` : scope);
      }
    }
  }
  t.comment(`${relative(projectPath(), projectPath(entry))}: ${seen.size} own modules`);
  return packages;
}

t.test(
  'a node or controller start loads metrics, YAML, keystore, x509 packages on use',
  async (t) => {
    const node = await packagesReached('src/cli/node/node-command.ts');
    const controller = await packagesReached('src/cli/controller/controller-command.ts');
    // The scan sees what the commands do load statically, so an empty answer is not a pass.
    t.ok(node.has('@grpc/grpc-js') && node.has('pino'), 'the node scan sees gRPC and pino');
    t.ok(controller.has('pino'), 'the controller scan sees pino');
    t.same(
      LOADED_ON_USE.filter((name) => node.has(name)),
      [],
      'cert-csi node',
    );
    t.same(
      LOADED_ON_USE.filter((name) => controller.has(name)),
      [],
      'cert-csi controller',
    );
  },
);
