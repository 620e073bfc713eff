import t from 'tap';
import type { ReloadSpec } from '../../src/api/volume-spec.js';
import {
  type ReloadSignalMode,
  reloadRefusal,
} from '../../src/volume-manager/reload/volume-reloader.js';

// Which reload attributes a node serves, by how it signals (cert-csi node --reload-signals in
// Kubernetes mode, PID files in embedded mode, nothing otherwise).
t.test('reloadRefusal: a volume asking for what the node does not serve is refused', async (t) => {
  const signal = { signal: { name: 'SIGHUP' } } as ReloadSpec;
  const pidFile = { signal: { name: 'SIGHUP', pidFile: '/run/app.pid' } } as ReloadSpec;
  const url = { url: 'http://${POD_IP}/-/reload' } as ReloadSpec;
  const cases: [string, ReloadSpec | undefined, ReloadSignalMode, RegExp | undefined][] = [
    ['no reload attributes, signals off', undefined, 'off', undefined],
    ['reload-url only, signals off', url, 'off', undefined],
    [
      'a signal, signals off',
      signal,
      'off',
      /not enabled on this node \(cert-csi node --reload-signals\)/,
    ],
    ['a signal, pod processes', signal, 'pod-processes', undefined],
    [
      'a PID file, pod processes',
      pidFile,
      'pod-processes',
      /embedded mode only: a pod may not name a node file/,
    ],
    ['a PID file, embedded', pidFile, 'pid-file', undefined],
    [
      'a signal without PID file, embedded',
      signal,
      'pid-file',
      /needs reload-pid-file in embedded mode/,
    ],
  ];
  for (const [what, reload, mode, refused] of cases) {
    const problem = reloadRefusal(reload, mode);
    if (refused === undefined) t.equal(problem, undefined, what);
    else t.match(problem, refused, what);
  }
});
