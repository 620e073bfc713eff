// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${POD_IP}` is the variable syntax under test
import t from 'tap';
import { POD_NAMESPACE, startCluster } from '../support/cluster-harness.js';
import { everything, OUR_ROLES, REMOVAL_PARTS, removalCases } from './rbac-scenario.js';

// The scenario under the manifests' rules; the cases that each remove one rule or verb run in
// rbac-removals-*.test.ts, a file per part of the scenario (see rbac-scenario.ts).

t.test(
  'with exactly the RBAC rules of deploy/manifests both components do their work',
  async (t) => {
    const cluster = await startCluster(t);
    const { forbidden, issued, certificates, podCertificates, csrs, podIp } = await everything(
      t,
      cluster,
    );
    t.same(
      forbidden.map((r) => `${r.user} ${r.verb} ${r.resource}`),
      [],
      'no request was refused',
    );
    t.ok(issued, 'the volume was issued and renewed');
    t.ok(certificates, 'the Certificate was issued and re-issued');
    t.ok(
      podCertificates,
      'a pod certificate was issued, its trust bundle published, rotated and withdrawn',
    );
    t.ok(csrs, "a user's CertificateSigningRequest for a namespaced Issuer was signed");
    t.ok(podIp, 'a ${POD_IP} volume got its certificate once the pod had an IP');
    const events = await cluster.server.store.list(
      { group: '', version: 'v1', kind: 'Event', plural: 'events', namespaced: true },
      { namespace: POD_NAMESPACE },
    );
    t.ok(
      events.items.some(
        (e) => (e as unknown as { reason: string }).reason === 'CertificateRequestPending',
      ),
      'the stuck volume got an Event on its pod',
    );
  },
);

t.test('the rbac-removals files together remove every rule and verb of our roles', async (t) => {
  const full = (await startCluster(t)).rbac;
  const rules = full.rules().filter((r) => OUR_ROLES.includes(r.role));
  t.ok(rules.length >= 10, `${rules.length} rules in the node and controller roles`);
  const parts = Object.entries(REMOVAL_PARTS);
  const cases = removalCases(full);
  const named = (removal: (typeof cases)[number]) =>
    `${removal.label} of ${removal.rule.role} rule ${removal.rule.index}`;
  t.same(
    cases
      .filter((removal) => parts.filter(([, inPart]) => inPart(removal)).length !== 1)
      .map(named),
    [],
    'every case is in exactly one part',
  );
  for (const [part, inPart] of parts) {
    t.ok(cases.some(inPart), `the part ${part} has cases`);
  }
});
