import { status } from '@grpc/grpc-js';
import t from 'tap';
import {
  type CallContext,
  type FailedCall,
  pluginCallMessage,
} from '../../src/cli/common/plugin-call-failure.js';

// What publish and unpublish say when their CSI call fails: one line that says what is wrong
// and what to do; grpc-js's own wording never reaches a person.
const local: CallContext = { endpoint: 'unix://./.cert-csi/csi.sock', volumeId: 'v-rsa' };
const GRPC_INTERNALS =
  /Last error|Resolution note|name resolution|LB pick|metadata filters|RST_STREAM/;

const cases: Array<[string, FailedCall, CallContext, string]> = [
  [
    'no socket there',
    {
      code: status.UNAVAILABLE,
      details:
        'No connection established. Last error: Error: connect ENOENT ./.cert-csi/csi.sock. Resolution note: ',
    },
    local,
    "no plugin answers at ./.cert-csi/csi.sock: is 'npm start' (or cert-csi node --endpoint unix://./.cert-csi/csi.sock) running?",
  ],
  [
    'a socket nobody listens on',
    { code: status.UNAVAILABLE, details: 'Failed to connect to unix:./s (connect ECONNREFUSED)' },
    { endpoint: 'unix:///run/s', volumeId: 'v' },
    "no plugin answers at /run/s: is 'npm start' (or cert-csi node --endpoint unix:///run/s) running?",
  ],
  [
    'our --timeout ran out',
    {
      code: status.DEADLINE_EXCEEDED,
      details:
        'Deadline exceeded after 10.005s,name resolution: 0.021s,metadata filters: 0.001s,LB pick: 0.002s,remote_addr=',
    },
    { ...local, timedOutAfter: '10s' },
    'timed out after 10s waiting for the plugin; its log says why (cert-csi status --data-root DIR --volume-id v-rsa shows the last error)',
  ],
  [
    "grpc-js's deadline wording before ours is counted as ran out",
    { code: status.DEADLINE_EXCEEDED, details: 'Deadline exceeded after 1.999s,LB pick: 0s' },
    local,
    'timed out waiting for the plugin; its log says why (cert-csi status --data-root DIR --volume-id v-rsa shows the last error)',
  ],
  [
    'the plugin itself answers DEADLINE_EXCEEDED (its issuance deadline): its words',
    { code: status.DEADLINE_EXCEEDED, details: 'the certificate did not come within 60s' },
    local,
    'DEADLINE_EXCEEDED: the certificate did not come within 60s',
  ],
  [
    'the connection dropped mid-call',
    { code: status.UNAVAILABLE, details: 'Connection dropped' },
    local,
    'the connection to the plugin at ./.cert-csi/csi.sock ended without its answer (UNAVAILABLE): is it still running? its log says why',
  ],
  [
    'a stream reset',
    { code: status.INTERNAL, details: 'Received RST_STREAM with code 2' },
    local,
    'the connection to the plugin at ./.cert-csi/csi.sock ended without its answer (INTERNAL): is it still running? its log says why',
  ],
  [
    'an error without a gRPC code',
    { details: 'socket hang up' },
    { endpoint: 'tcp://127.0.0.1:9', volumeId: 'v' },
    'the connection to the plugin at tcp://127.0.0.1:9 ended without its answer (UNKNOWN): is it still running? its log says why',
  ],
  [
    "the plugin's refusal: its code and its words",
    {
      code: status.FAILED_PRECONDITION,
      details: 'Issuer "embedded-ca" not found; a ClusterIssuer of that name exists',
    },
    local,
    'FAILED_PRECONDITION: Issuer "embedded-ca" not found; a ClusterIssuer of that name exists',
  ],
  ['an answer without a message', { code: status.INTERNAL }, local, 'INTERNAL: (no message)'],
  ['a code grpc-js does not name', { code: 99, details: 'odd' }, local, '99: odd'],
];

t.test('each failed call is one line saying what to do, without gRPC internals', async (t) => {
  for (const [what, err, call, expected] of cases) {
    const message = pluginCallMessage(err, call);
    t.equal(message, expected, what);
    t.notMatch(message, /\n/, `${what}: one line`);
    t.notMatch(message, GRPC_INTERNALS, `${what}: no gRPC internals`);
  }
});
