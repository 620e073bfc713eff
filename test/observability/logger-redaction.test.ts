import { Writable } from 'node:stream';
import t from 'tap';
import { createLogger } from '../../src/observability/logger.js';

t.test('keystore passwords in a logged volume context are redacted', async (t) => {
  let text = '';
  const sink = new Writable({
    write(chunk, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  const logger = createLogger('info', sink);
  const context = {
    'csi.cert-manager.io/pkcs12-password': 'p12-secret',
    'csi.cert-manager.io/jks-password': 'jks-secret',
    'csi.certmanager.k8s.io/jks-password': 'legacy-jks-secret',
  };
  logger.info({ volumeContext: context, volume_context: context }, 'published');
  t.match(text, /"csi\.cert-manager\.io\/jks-password":"\[REDACTED\]"/);
  t.notMatch(text, /secret/, 'no password reached the log');
});
