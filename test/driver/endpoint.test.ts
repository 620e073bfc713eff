import t from 'tap';
import { grpcAddress, parseEndpoint } from '../../src/driver/endpoint.js';

t.test('endpoints: unix paths, tcp addresses, and a clear error for anything else', async (t) => {
  t.same(parseEndpoint('unix:///run/cert-csi/csi.sock'), {
    kind: 'unix',
    path: '/run/cert-csi/csi.sock',
  });
  t.same(
    parseEndpoint('UNIX:///x.sock'),
    { kind: 'unix', path: '/x.sock' },
    'scheme is case-insensitive',
  );
  const relative = parseEndpoint('unix://plugin/csi.sock');
  t.equal(
    relative.kind === 'unix' && relative.path,
    `${process.cwd()}/plugin/csi.sock`,
    'relative to cwd',
  );
  t.same(parseEndpoint('tcp://127.0.0.1:10000'), { kind: 'tcp', address: '127.0.0.1:10000' });
  t.same(parseEndpoint('tcp://[::1]:10000'), { kind: 'tcp', address: '[::1]:10000' });
  t.equal(grpcAddress({ kind: 'unix', path: '/a.sock' }), 'unix:///a.sock');
  t.equal(grpcAddress({ kind: 'tcp', address: 'localhost:1' }), 'localhost:1');
  t.throws(
    () => parseEndpoint('/run/csi.sock'),
    /invalid endpoint "\/run\/csi\.sock": expected unix:\/\/PATH or tcp:\/\/HOST:PORT/,
  );
  t.throws(() => parseEndpoint('http://x'), /invalid endpoint/);
  t.throws(
    () => parseEndpoint('tcp://nohost'),
    /invalid endpoint "tcp:\/\/nohost": expected tcp:\/\/HOST:PORT/,
  );
});
