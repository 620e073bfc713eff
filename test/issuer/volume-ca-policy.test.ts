import t from 'tap';
import { CERTIFICATE_NAME_ANNOTATION } from '../../src/api/certificate.js';
import type { CertificateRequest } from '../../src/api/certificate-request.js';
import type { Issuer } from '../../src/api/issuer.js';
import {
  ALLOW_IS_CA_ANNOTATION,
  hashIdentifier,
  isCsiVolumeRequest,
  NODE_ID_HASH_LABEL,
  VOLUME_ID_HASH_LABEL,
} from '../../src/api/labels.js';
import type { VolumeCertificateSpec } from '../../src/api/volume-spec.js';
import { attributeKeyIn } from '../../src/attributes/attribute-keys.js';
import { parseVolumeAttributes } from '../../src/attributes/volume-attributes.js';
import {
  VOLUME_CA_DENIED_REASON,
  volumeCaDecision,
} from '../../src/issuer/certificaterequests/approval-policy.js';
import type { IssuerLookup } from '../../src/issuer/issuer-lookup.js';
import { volumeCaRefusal } from '../../src/issuer/volume-ca-policy.js';
import { volumeCaCheck } from '../../src/volume-manager/issuance/issuance-check.js';
import { buildCertificateRequest } from '../../src/volume-manager/issuance/request-builder.js';
import {
  certificateRequest,
  certificateRequestFrom,
  clusterIssuer,
  issuer,
  issuerFrom,
  withAnnotations,
  withIssuerRef,
  withLabels,
  withNamespace,
  withSpec,
} from '../support/builders/index.js';
import { INLINE_CAPABILITY } from '../support/publish-call.js';

const OPT_IN = 'cert-csi.io/allow-is-ca: "true"';
const CSI_LABELS = {
  [NODE_ID_HASH_LABEL]: hashIdentifier('node-1'),
  [VOLUME_ID_HASH_LABEL]: hashIdentifier('csi-1'),
};

/** The ClusterIssuer the requests name. */
const ca = clusterIssuer('ca', withSpec({ ca: { secretName: 's' } }));

/** Sets the annotation by which an issuer allows CA certificates for CSI volumes. */
const allowingCa = (value: string) => withAnnotations({ [ALLOW_IS_CA_ANNOTATION]: value });

/** A request in sandbox for the ClusterIssuer ca, as a base for the cases. */
const r = certificateRequest(
  'r',
  withNamespace('sandbox'),
  withIssuerRef({ name: 'ca', kind: 'ClusterIssuer' }),
);

const found =
  (i: Issuer): (() => IssuerLookup) =>
  () => ({ issuer: i });
const missing: () => IssuerLookup = () => ({
  notFound: 'clusterissuer.cert-manager.io "ca" not found',
});

t.test('which requests are made for CSI volumes: the node plugin labels', async (t) => {
  t.ok(isCsiVolumeRequest(CSI_LABELS));
  t.ok(isCsiVolumeRequest({ [NODE_ID_HASH_LABEL]: 'x' }), 'the node label alone');
  t.ok(isCsiVolumeRequest({ [VOLUME_ID_HASH_LABEL]: 'x' }), 'the volume label alone');
  t.notOk(isCsiVolumeRequest(undefined));
  t.notOk(isCsiVolumeRequest({ 'app.kubernetes.io/name': 'x' }));
  const spec = parsed({ 'csi.cert-manager.io/is-ca': 'true' });
  const built = buildCertificateRequest(spec, {
    name: 'r',
    nodeId: 'n',
    volumeId: 'v',
    csrPem: '',
  });
  t.ok(isCsiVolumeRequest(built.metadata.labels), 'what the node plugin builds carries them');
});

t.test('the approver rule: CSI volume requests, Certificates and users’ own', async (t) => {
  const plain = issuerFrom(ca);
  const allowed = issuerFrom(ca, allowingCa('true'));
  const denied = (message: RegExp) => ({
    decision: 'deny',
    reason: VOLUME_CA_DENIED_REASON,
    message,
  });
  const cases: Array<
    [string, CertificateRequest, () => IssuerLookup, ReturnType<typeof denied> | undefined]
  > = [
    [
      'a CSI volume asking for a CA, issuer without the annotation',
      certificateRequestFrom(r, withSpec({ isCA: true }), withLabels(CSI_LABELS)),
      found(plain),
      denied(
        /^a CSI volume asked for a CA certificate \(is-ca: "true", spec\.isCA\): ClusterIssuer "ca" does not allow CA certificates for CSI volumes: set the annotation cert-csi\.io\/allow-is-ca: "true" on it to allow them$/,
      ),
    ],
    [
      'the same with the annotation',
      certificateRequestFrom(r, withSpec({ isCA: true }), withLabels(CSI_LABELS)),
      found(allowed),
      undefined,
    ],
    [
      'an annotation that is not exactly "true"',
      certificateRequestFrom(r, withSpec({ isCA: true }), withLabels(CSI_LABELS)),
      found(issuerFrom(ca, allowingCa('True'))),
      denied(/does not allow CA certificates/),
    ],
    [
      'an issuer that does not exist',
      certificateRequestFrom(r, withSpec({ isCA: true }), withLabels(CSI_LABELS)),
      missing,
      denied(/ClusterIssuer "ca" does not exist, so it cannot allow CA certificates/),
    ],
    [
      'a namespaced Issuer',
      certificateRequestFrom(
        r,
        withSpec({ isCA: true, issuerRef: { name: 'ca' } }),
        withLabels(CSI_LABELS),
      ),
      found(issuer('ca', withNamespace('sandbox'), withSpec({ ca: { secretName: 's' } }))),
      denied(/Issuer "sandbox\/ca" does not allow/),
    ],
    [
      'an issuer of another group, whose annotations nobody reads',
      certificateRequestFrom(
        r,
        withSpec({
          isCA: true,
          issuerRef: { name: 'pca', kind: 'PCAIssuer', group: 'example.com' },
        }),
        withLabels(CSI_LABELS),
      ),
      () => t.fail('no lookup for other groups') as never,
      denied(
        /PCAIssuer "pca" of group "example\.com" cannot allow CA certificates for CSI volumes: only an Issuer or ClusterIssuer of cert-manager\.io/,
      ),
    ],
    [
      'a pod that forges a Certificate annotation is still a CSI volume',
      certificateRequestFrom(
        r,
        withSpec({ isCA: true }),
        withLabels(CSI_LABELS),
        withAnnotations({ [CERTIFICATE_NAME_ANNOTATION]: 'ca' }),
      ),
      found(plain),
      denied(/does not allow/),
    ],
    [
      'a CSI volume without isCA',
      certificateRequestFrom(r, withSpec({ isCA: false }), withLabels(CSI_LABELS)),
      found(plain),
      undefined,
    ],
    [
      "a Certificate's request (the bootstrap CA)",
      certificateRequestFrom(
        r,
        withSpec({ isCA: true }),
        withAnnotations({ [CERTIFICATE_NAME_ANNOTATION]: 'cert-csi-ca' }),
      ),
      found(plain),
      undefined,
    ],
    [
      "a user's own request",
      certificateRequestFrom(r, withSpec({ isCA: true })),
      found(plain),
      undefined,
    ],
  ];
  const { namespace: _none, ...withoutNamespace } = certificateRequestFrom(
    r,
    withSpec({ isCA: true, issuerRef: { name: 'ca' } }),
    withLabels(CSI_LABELS),
  ).metadata;
  cases.push([
    'a request as written without its namespace',
    {
      ...certificateRequestFrom(
        r,
        withSpec({ isCA: true, issuerRef: { name: 'ca' } }),
        withLabels(CSI_LABELS),
      ),
      metadata: withoutNamespace,
    },
    missing,
    denied(/Issuer "\/ca" does not exist/),
  ]);
  for (const [name, cr, lookup, expected] of cases) {
    const decision = volumeCaDecision(cr, lookup);
    if (expected === undefined) t.equal(decision, undefined, `${name}: left to the policy`);
    else t.match(decision, expected, `${name}: denied`);
  }
});

t.test('the refusal names the issuer and the annotation', async (t) => {
  const ref = { name: 'ca', kind: 'Issuer' };
  t.equal(
    volumeCaRefusal(
      ref,
      'team-a',
      found(issuer('ca', withNamespace('team-a'), withSpec({ ca: { secretName: 's' } }))),
    ),
    `Issuer "team-a/ca" does not allow CA certificates for CSI volumes: set the annotation ${OPT_IN} on it to allow them`,
  );
  t.equal(
    volumeCaRefusal({ name: 'ca' }, 'team-a', missing),
    `Issuer "team-a/ca" does not exist, so it cannot allow CA certificates for CSI volumes (annotation ${OPT_IN})`,
  );
  t.equal(
    volumeCaRefusal(
      { name: 'ca', kind: 'ClusterIssuer' },
      'x',
      found(issuerFrom(ca, allowingCa('true'))),
    ),
    undefined,
  );
});

function parsed(attributes: Record<string, string>): VolumeCertificateSpec {
  const result = parseVolumeAttributes(context(attributes));
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.spec;
}

function context(attributes: Record<string, string>): Record<string, string> {
  return {
    'csi.storage.k8s.io/ephemeral': 'true',
    'csi.storage.k8s.io/pod.name': 'app-0',
    'csi.storage.k8s.io/pod.namespace': 'sandbox',
    'csi.cert-manager.io/issuer-name': 'ca',
    'csi.cert-manager.io/issuer-kind': 'ClusterIssuer',
    ...attributes,
  };
}

t.test('the publish check names the key as written', async (t) => {
  const asked: string[] = [];
  const check = volumeCaCheck((ref, namespace) => {
    asked.push(`${namespace}/${ref.name}`);
    return { issuer: issuerFrom(ca) };
  });
  const publish = (attributes: Record<string, string>) => ({
    volumeId: 'csi-1',
    targetPath: '/t',
    spec: parsed(attributes),
    volumeContext: context(attributes),
    capability: INLINE_CAPABILITY,
  });
  t.equal(check(publish({})), undefined, 'no is-ca: nothing to check');
  t.same(asked, [], 'and no issuer read');
  t.same(check(publish({ 'csi.cert-manager.io/is-ca': 'true' })), {
    message: `csi.cert-manager.io/is-ca: "true" asks for a CA certificate: ClusterIssuer "ca" does not allow CA certificates for CSI volumes: set the annotation ${OPT_IN} on it to allow them`,
    reason: 'denied',
  });
  t.match(
    check(publish({ 'csi.certmanager.k8s.io/is-ca': 'true' }))?.message,
    /^csi\.certmanager\.k8s\.io\/is-ca: "true" asks/,
    'the legacy key',
  );
  t.same(asked, ['sandbox/ca', 'sandbox/ca'], "looked up from the pod's namespace");
  t.equal(
    attributeKeyIn({}, 'is-ca'),
    'csi.cert-manager.io/is-ca',
    'an absent key reads as the current one',
  );
  const allowing = volumeCaCheck(() => ({ issuer: issuerFrom(ca, allowingCa('true')) }));
  t.equal(allowing(publish({ 'csi.cert-manager.io/is-ca': 'true' })), undefined, 'allowed');
});
