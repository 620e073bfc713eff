import t from 'tap';
import { BindMounter, DEFAULT_TMPFS_SIZE } from '../../src/volume/bind-mounter.js';
import { autoMountMode, createMounter } from '../../src/volume/create-mounter.js';
import { DirectMounter } from '../../src/volume/direct-mounter.js';
import { recordingLogger } from '../support/recording-logger.js';

t.test('auto picks bind only for root on Linux', async (t) => {
  t.equal(autoMountMode('linux', 0), 'bind');
  t.equal(autoMountMode('linux', 1000), 'direct');
  t.equal(autoMountMode('darwin', 0), 'direct');
  t.equal(autoMountMode('win32', undefined), 'direct');
  const expected = process.platform === 'linux' && process.getuid?.() === 0 ? 'bind' : 'direct';
  t.equal(autoMountMode(), expected, 'defaults to this process');
});

t.test('createMounter honours the mode', async (t) => {
  t.equal(createMounter().mode, autoMountMode());
  t.equal(createMounter({ mode: 'auto' }).mode, autoMountMode());
  t.type(createMounter({ mode: 'direct' }), DirectMounter);
  const bind = createMounter({ mode: 'bind', logger: recordingLogger() });
  t.type(bind, BindMounter);
  t.equal(bind.mode, 'bind');
  t.equal(DEFAULT_TMPFS_SIZE, '64m');
  t.type(createMounter({ mode: 'bind', tmpfsSize: '10%' }), BindMounter);
});

t.test('a bad tmpfs size is refused up front', async (t) => {
  for (const tmpfsSize of ['', '64 m', '1,mode=777', 'big']) {
    t.throws(() => createMounter({ mode: 'bind', tmpfsSize }), {
      name: 'VolumeError',
      message: /invalid tmpfs size/,
    });
  }
});

t.test('bind refresh does nothing', async (t) => {
  await createMounter({ mode: 'bind' }).refresh('/nonexistent/data', '/nonexistent/target');
  t.pass('resolved without touching the file system');
});
