import t from 'tap';
import type { Pod } from '../../src/api/pod.js';
import {
  familyOf,
  gateProblem,
  gatesProblem,
  parseReadinessGate,
  type ReadinessGate,
} from '../../src/volume-manager/readiness/readiness-gate.js';

t.test('--pod-readiness-gate parses as csi-driver does', async (t) => {
  const good: Array<[string, ReadinessGate]> = [
    ['pod-ip:any', { type: 'pod-ip', family: 'any' }],
    ['pod-ip:ipv4', { type: 'pod-ip', family: 'ipv4' }],
    ['pod-ip:ipv6', { type: 'pod-ip', family: 'ipv6' }],
    ['pod-condition:Ready', { type: 'pod-condition', condition: 'Ready', status: 'True' }],
    ['pod-condition:Ready=false', { type: 'pod-condition', condition: 'Ready', status: 'False' }],
    [
      'pod-condition:example.com/warm=UNKNOWN',
      { type: 'pod-condition', condition: 'example.com/warm', status: 'Unknown' },
    ],
    ['pod-condition:Ready=True', { type: 'pod-condition', condition: 'Ready', status: 'True' }],
    ['pod-annotation:example.com/ready', { type: 'pod-annotation', key: 'example.com/ready' }],
    // Only the first colon separates: the value keeps the others.
    ['pod-annotation:a:b', { type: 'pod-annotation', key: 'a:b' }],
  ];
  for (const [spec, gate] of good) t.same(parseReadinessGate(spec), gate, spec);

  const bad: Array<[string, string]> = [
    ['pod-ip', 'invalid --pod-readiness-gate "pod-ip": expected <type>:<value>, got "pod-ip"'],
    ['pod-ip:', 'invalid --pod-readiness-gate "pod-ip:": expected <type>:<value>, got "pod-ip:"'],
    [':any', 'invalid --pod-readiness-gate ":any": expected <type>:<value>, got ":any"'],
    ['', 'invalid --pod-readiness-gate "": expected <type>:<value>, got ""'],
    [
      'pod-label:app',
      'invalid --pod-readiness-gate "pod-label:app": unknown type "pod-label"; supported types: pod-ip, pod-condition, pod-annotation',
    ],
    [
      'pod-ip:ipv5',
      'invalid --pod-readiness-gate "pod-ip:ipv5": pod-ip: unsupported family "ipv5"; use any, ipv4, or ipv6',
    ],
    [
      'pod-ip:IPv4',
      'invalid --pod-readiness-gate "pod-ip:IPv4": pod-ip: unsupported family "IPv4"; use any, ipv4, or ipv6',
    ],
    [
      'pod-condition:=True',
      'invalid --pod-readiness-gate "pod-condition:=True": pod-condition: condition type must not be empty',
    ],
    [
      'pod-condition:Ready=yes',
      'invalid --pod-readiness-gate "pod-condition:Ready=yes": pod-condition: invalid status "yes"; must be True, False, or Unknown',
    ],
    [
      'pod-condition:Ready=',
      'invalid --pod-readiness-gate "pod-condition:Ready=": pod-condition: invalid status ""; must be True, False, or Unknown',
    ],
  ];
  for (const [spec, message] of bad) t.throws(() => parseReadinessGate(spec), { message }, spec);
  // A value as long as a flag can be is echoed shortened.
  t.throws(() => parseReadinessGate(`x:${'y'.repeat(500)}`), {
    message: /^invalid --pod-readiness-gate "x:y+"…\(502 characters\): unknown type "x"/,
  });
});

function pod(status: Pod['status'], annotations?: Record<string, string>): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'app-0', namespace: 'sandbox', ...(annotations ? { annotations } : {}) },
    ...(status ? { status } : {}),
  };
}

t.test('gates evaluate a Pod with csi-driver reasons', async (t) => {
  const gate = parseReadinessGate;
  const none = pod(undefined);
  const v4 = pod({ podIP: '10.1.2.3', podIPs: [{ ip: '10.1.2.3' }] });
  const v6 = pod({ podIP: 'fd00::3', podIPs: [{ ip: 'fd00::3' }] });
  const mapped = pod({ podIPs: [{ ip: '::ffff:10.1.2.3' }] });
  const podIPOnly = pod({ podIP: 'fd00::4' });
  const cases: Array<[string, Pod, string | undefined]> = [
    ['pod-ip:any', none, 'pod has no IP address yet'],
    ['pod-ip:any', v4, undefined],
    ['pod-ip:any', podIPOnly, undefined],
    ['pod-ip:ipv4', v4, undefined],
    ['pod-ip:ipv4', v6, 'pod has no IPv4 address yet'],
    ['pod-ip:ipv4', mapped, undefined],
    ['pod-ip:ipv6', mapped, 'pod has no IPv6 address yet'],
    ['pod-ip:ipv6', v6, undefined],
    ['pod-ip:ipv6', podIPOnly, undefined],
    ['pod-ip:any', pod({ podIPs: [{ ip: 'not-an-ip' }] }), 'pod has no IP address yet'],
    ['pod-condition:Ready', none, 'pod condition "Ready" not yet present'],
    [
      'pod-condition:Ready',
      pod({ conditions: [{ type: 'Ready', status: 'False' }] }),
      'pod condition Ready is "False", want "True"',
    ],
    ['pod-condition:Ready', pod({ conditions: [{ type: 'Ready', status: 'True' }] }), undefined],
    [
      'pod-condition:Ready=unknown',
      pod({ conditions: [{ type: 'Ready', status: 'Unknown' }] }),
      undefined,
    ],
    [
      'pod-annotation:example.com/ready',
      none,
      'pod does not yet have annotation "example.com/ready" with a non-empty value',
    ],
    [
      'pod-annotation:example.com/ready',
      pod(undefined, { 'example.com/ready': '' }),
      'pod does not yet have annotation "example.com/ready" with a non-empty value',
    ],
    ['pod-annotation:example.com/ready', pod(undefined, { 'example.com/ready': 'yes' }), undefined],
  ];
  for (const [spec, subject, reason] of cases) {
    t.equal(
      gateProblem(gate(spec), subject),
      reason,
      `${spec} on ${JSON.stringify(subject.status)}`,
    );
  }
  // AND: every failing gate's reason, joined with "; ".
  const gates = ['pod-ip:ipv4', 'pod-condition:Ready', 'pod-annotation:a'].map(gate);
  t.equal(
    gatesProblem(gates, v6),
    'pod has no IPv4 address yet; pod condition "Ready" not yet present; pod does not yet have annotation "a" with a non-empty value',
  );
  t.equal(
    gatesProblem(
      gates,
      pod(
        { podIPs: [{ ip: '10.0.0.1' }], conditions: [{ type: 'Ready', status: 'True' }] },
        { a: '1' },
      ),
    ),
    undefined,
  );
  t.equal(gatesProblem([], none), undefined, 'no gates: ready');
});

t.test('address families', async (t) => {
  t.equal(familyOf('10.0.0.1'), 'ipv4');
  t.equal(familyOf('::ffff:10.0.0.1'), 'ipv4', 'IPv4-mapped IPv6 counts as IPv4');
  t.equal(familyOf('::ffff:a00:1'), 'ipv4', 'also in hex');
  t.equal(familyOf('fd00::1'), 'ipv6');
  t.equal(familyOf('fe80::1%eth0'), undefined, 'a zone is no pod address');
  t.equal(familyOf('nope'), undefined);
});
