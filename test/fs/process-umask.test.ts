import t from 'tap';
import { parseStatusUmask, processUmask, umaskKeeps } from '../../src/fs/process-umask.js';

t.test('parseStatusUmask reads the Umask line of /proc/<pid>/status', async (t) => {
  const cases: Array<[string, string, number | undefined]> = [
    ['usual', 'Name:\tnode\nUmask:\t0022\nState:\tR (running)\n', 0o022],
    ['strict', 'Umask:\t0077\n', 0o077],
    ['none masked', 'Name:\tx\nUmask:\t0000', 0],
    ['no line (a kernel before 4.7)', 'Name:\tnode\nState:\tR\n', undefined],
    ['not octal', 'Umask:\t0089\n', undefined],
    ['another field ending in Umask', 'NotUmask:\t0022\n', undefined],
    ['empty', '', undefined],
  ];
  for (const [name, status, want] of cases) t.equal(parseStatusUmask(status), want, name);
});

t.test('umaskKeeps: only a mode the umask leaves whole, and only permission bits', async (t) => {
  const cases: Array<[string, number, number | undefined, boolean]> = [
    ['0440 under 022', 0o440, 0o022, true],
    ['0644 under 022', 0o644, 0o022, true],
    ['0664 under 022: group write masked', 0o664, 0o022, false],
    ['0440 under 077: group read masked', 0o440, 0o077, false],
    ['0600 under 077', 0o600, 0o077, true],
    ['0777 under 000', 0o777, 0, true],
    ['setgid bit: needs a chmod', 0o2750, 0, false],
    ['unknown umask', 0o400, undefined, false],
  ];
  for (const [name, mode, umask, want] of cases) t.equal(umaskKeeps(mode, umask), want, name);
});

t.test('processUmask is this process umask', async (t) => {
  // process.umask() without an argument reads the mask by setting it twice: fine in a test.
  t.equal(processUmask(), process.platform === 'linux' ? process.umask() : undefined);
});
