// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${POD_IP}` is the variable syntax under test
import t from 'tap';
import { reloadUrl, reloadUrlProblem } from '../../src/attributes/reload-attributes.js';
import {
  formatAttributeErrors,
  parseVolumeAttributes,
} from '../../src/attributes/volume-attributes.js';
import { podInfo } from '../support/publish-call.js';

const POD_CONTEXT = {
  ...podInfo({ name: 'app-0', namespace: 'shop', uid: 'uid-1', serviceAccount: 'app' }),
  'csi.storage.k8s.io/ephemeral': 'true',
  'csi.cert-manager.io/issuer-name': 'ca',
};

const reloadOf = (attributes: Record<string, string>) => {
  const parsed = parseVolumeAttributes({ ...POD_CONTEXT, ...attributes });
  return parsed.ok
    ? { reload: parsed.spec.reload }
    : { error: formatAttributeErrors(parsed.errors) };
};

t.test('reload URLs: only a POST to the pod own IP over http', async (t) => {
  const good = [
    'http://${POD_IP}',
    'http://${POD_IP}:8080',
    'http://${POD_IP}:8080/-/reload',
    'http://${POD_IP}/reload?now=1',
  ];
  for (const url of good) t.equal(reloadUrlProblem(url), undefined, url);
  const bad: Array<[string, RegExp]> = [
    ['https://${POD_IP}/reload', /must be http:\/\/\$\{POD_IP\}/],
    ['http://10.0.0.1/reload', /must be http/],
    ['http://metadata.google.internal/', /must be http/],
    ['http://${POD_IP}.evil.example/', /must be http/],
    ['http://${POD_IP}@evil.example/', /must be http/],
    ['http://${POD_IP}:8080/${POD_NAME}', /no other variable/],
    ['http://${POD_IP}:99999/', /must be http/],
    ['http://${POD_IP}/a#frag', /must be http/],
    [`http://\${POD_IP}/${'a'.repeat(1100)}`, /Too long/],
  ];
  for (const [url, why] of bad) t.match(reloadUrlProblem(url), why, url.slice(0, 60));
});

t.test('a reload URL is filled in with the pod IP, in brackets for IPv6', async (t) => {
  t.equal(
    reloadUrl('http://${POD_IP}:8080/-/reload', '10.1.2.3')?.href,
    'http://10.1.2.3:8080/-/reload',
  );
  t.equal(reloadUrl('http://${POD_IP}:8080/r', 'fd00::7')?.href, 'http://[fd00::7]:8080/r');
  t.equal(
    reloadUrl('http://${POD_IP}:8080/r', 'not an ip!'),
    undefined,
    'never a URL to elsewhere',
  );
});

t.test('reload attributes parse into the spec, or are refused naming the key', async (t) => {
  const cases: Array<[string, Record<string, string>, unknown]> = [
    ['none', {}, { reload: undefined }],
    [
      'url',
      { 'csi.cert-manager.io/reload-url': 'http://${POD_IP}:8080/-/reload' },
      { reload: { url: 'http://${POD_IP}:8080/-/reload' } },
    ],
    [
      'HUP',
      { 'csi.cert-manager.io/reload-signal': 'HUP' },
      { reload: { signal: { name: 'SIGHUP' } } },
    ],
    [
      'TERM to a container',
      {
        'csi.cert-manager.io/reload-signal': 'TERM',
        'csi.cert-manager.io/reload-container': 'web',
      },
      { reload: { signal: { name: 'SIGTERM', container: 'web' } } },
    ],
    [
      'USR2 by PID file',
      {
        'csi.cert-manager.io/reload-signal': 'USR2',
        'csi.cert-manager.io/reload-pid-file': '/run/app.pid',
      },
      { reload: { signal: { name: 'SIGUSR2', pidFile: '/run/app.pid' } } },
    ],
    [
      'USR1 with a URL too',
      {
        'csi.cert-manager.io/reload-signal': 'USR1',
        'csi.cert-manager.io/reload-url': 'http://${POD_IP}',
      },
      { reload: { url: 'http://${POD_IP}', signal: { name: 'SIGUSR1' } } },
    ],
    [
      'a signal off the allow-list',
      { 'csi.cert-manager.io/reload-signal': 'KILL' },
      {
        error:
          'csi.cert-manager.io/reload-signal: Unsupported value: "KILL": supported values: "HUP", "USR1", "USR2", "TERM"',
      },
    ],
    [
      'a signal number',
      { 'csi.cert-manager.io/reload-signal': '9' },
      { error: /reload-signal: Unsupported value: "9"/ },
    ],
    [
      'a container without a signal',
      { 'csi.cert-manager.io/reload-container': 'web' },
      {
        error:
          'csi.cert-manager.io/reload-container: Invalid value: "web": cannot use attribute without "csi.cert-manager.io/reload-signal"',
      },
    ],
    [
      'a PID file without a signal',
      { 'csi.cert-manager.io/reload-pid-file': '/run/a.pid' },
      { error: /reload-pid-file: Invalid value: "\/run\/a.pid": cannot use attribute without/ },
    ],
    [
      'a bad container name',
      {
        'csi.cert-manager.io/reload-signal': 'HUP',
        'csi.cert-manager.io/reload-container': 'Web_1',
      },
      { error: /reload-container: Invalid value: "Web_1": a lowercase RFC 1123 label/ },
    ],
    [
      'a relative PID file',
      {
        'csi.cert-manager.io/reload-signal': 'HUP',
        'csi.cert-manager.io/reload-pid-file': 'run/a.pid',
      },
      { error: /reload-pid-file: Invalid value: "run\/a.pid": must be a normalized absolute path/ },
    ],
    [
      'a PID file with ..',
      {
        'csi.cert-manager.io/reload-signal': 'HUP',
        'csi.cert-manager.io/reload-pid-file': '/run/../etc/a.pid',
      },
      { error: /must be a normalized absolute path/ },
    ],
    [
      'a PID file with NUL',
      {
        'csi.cert-manager.io/reload-signal': 'HUP',
        'csi.cert-manager.io/reload-pid-file': '/run/a\0.pid',
      },
      { error: /must not include NUL characters/ },
    ],
    [
      'a PID file too long',
      {
        'csi.cert-manager.io/reload-signal': 'HUP',
        'csi.cert-manager.io/reload-pid-file': `/${'a'.repeat(5000)}`,
      },
      { error: /must be at most 4096 characters/ },
    ],
    [
      'a PID file and a container',
      {
        'csi.cert-manager.io/reload-signal': 'HUP',
        'csi.cert-manager.io/reload-pid-file': '/run/a.pid',
        'csi.cert-manager.io/reload-container': 'web',
      },
      {
        error:
          /reload-pid-file: Invalid value: "\/run\/a.pid": cannot be used with "csi.cert-manager.io\/reload-container"/,
      },
    ],
    [
      'a URL to another host',
      { 'csi.cert-manager.io/reload-url': 'http://169.254.169.254/latest' },
      {
        error:
          /reload-url: Invalid value: "http:\/\/169.254.169.254\/latest": must be http:\/\/\$\{POD_IP\}/,
      },
    ],
  ];
  for (const [name, attributes, want] of cases) t.match(reloadOf(attributes), want, name);
});
