import { execFileSync } from 'node:child_process';
import t from 'tap';
import { uniqueSuffix } from '../../src/fs/unique-suffix.js';
import { moduleFileUrl } from '../support/project-files.js';

t.test('suffixes: distinct within a process and across processes, hex only', async (t) => {
  const here = Array.from({ length: 10_000 }, () => uniqueSuffix());
  t.equal(new Set(here).size, here.length, 'no repeat in one process');
  t.ok(
    here.every((s) => /^[0-9a-f]+$/.test(s)),
    'hex digits: a file or generation name part',
  );
  // Two more processes (a restart, or a container's pid 1 again): their first suffixes differ.
  const script = `import(${JSON.stringify(moduleFileUrl('src/fs/unique-suffix.ts'))}).then((m) => console.log(m.uniqueSuffix()))`;
  const others = [0, 1].map(() =>
    execFileSync(process.execPath, [...process.execArgv, '-e', script], {
      encoding: 'utf8',
    }).trim(),
  );
  t.equal(new Set([...others, here[0]]).size, 3, 'each process starts from its own random part');
});
