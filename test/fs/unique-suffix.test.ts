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
  // Another process (a restart, or a container's pid 1 again) starts from its own random part.
  const script = `import(${JSON.stringify(moduleFileUrl('src/fs/unique-suffix.ts'))}).then((m) => console.log(m.uniqueSuffix()))`;
  const other = execFileSync(process.execPath, [...process.execArgv, '-e', script], {
    encoding: 'utf8',
  }).trim();
  t.match(other, /^[0-9a-f]+$/);
  t.not(other, here[0], 'not the first suffix of this process');
  t.not(other.slice(0, 12), here[0]?.slice(0, 12), 'another random part');
});
