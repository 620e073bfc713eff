import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { decodeBytes } from '../../src/api/certificate-request.js';
import {
  type CertificateSigningRequest,
  CertificateSigningRequestKind,
} from '../../src/api/certificate-signing-request.js';
import { IssuerKind } from '../../src/api/issuer.js';
import { type Secret, SecretKind } from '../../src/api/secret.js';
import { isStoreError } from '../../src/store/errors.js';
import { issuer, tlsSecret, withNamespace, withSpec } from '../support/builders/index.js';
import { csrChain, csrObject, decideCsr, keyedCsr } from '../support/csr-fixtures.js';
import { rejection } from '../support/eventually.js';
import { makeCA, opensslVerify } from '../support/issuer-fixtures.js';
import { startPlugin } from '../support/plugin-harness.js';
import { waitForObject } from '../support/wait-for-object.js';

// Embedded mode signs CSRs too: created and approved through the store (a status write, as
// README says), every requester may reference every Issuer, and the result is persisted.

t.test('embedded mode signs approved CSRs for its ClusterIssuer and any Issuer', async (t) => {
  const stateDir = join(t.testdir(), 'state');
  const p = await startPlugin(t, { stateDir });
  const teamCa = await makeCA();
  await p.store.create(
    SecretKind,
    tlsSecret('shop', 'team-ca', { 'tls.crt': teamCa.certificatePem, 'tls.key': teamCa.keyPem }),
  );
  await p.store.create(
    IssuerKind,
    issuer('team-ca', withNamespace('shop'), withSpec({ ca: { secretName: 'team-ca' } })),
  );
  const embeddedCa = await p.store.get<Secret>(SecretKind, 'embedded-ca', 'kube-system');
  const cases = [
    {
      name: 'to-embedded-ca',
      signer: 'clusterissuers.cert-manager.io/embedded-ca',
      ca: decodeBytes(embeddedCa.data?.['tls.crt']) ?? '',
    },
    // Nobody granted `reference` to anybody: embedded mode has no RBAC to ask.
    {
      name: 'to-team-ca',
      signer: 'issuers.cert-manager.io/shop.team-ca',
      ca: teamCa.certificatePem,
    },
  ];
  for (const c of cases) {
    const { csrPem } = await keyedCsr();
    await p.store.create(
      CertificateSigningRequestKind,
      csrObject(c.name, c.signer, csrPem, { username: 'somebody' }),
    );
    await decideCsr(p.store, c.name, 'Approved');
    const issued = await waitForObject<CertificateSigningRequest>(
      p.store,
      CertificateSigningRequestKind,
      c.name,
      undefined,
      (csr) => Boolean(csr.status?.certificate),
      30_000,
    );
    t.match(await opensslVerify(c.ca, csrChain(issued)), /OK/, c.name);
  }
  // A request whose self-signature does not verify is refused at create, as the API server
  // does, before any signer sees it; nothing is stored.
  const { csrPem } = await keyedCsr();
  const der = Buffer.from(csrPem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
  der[der.length - 1] = (der[der.length - 1] as number) ^ 0xff;
  const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
  const badSignature = await rejection(
    p.store.create(
      CertificateSigningRequestKind,
      csrObject('tampered', 'clusterissuers.cert-manager.io/embedded-ca', tampered),
    ),
  );
  t.ok(isStoreError(badSignature, 'Invalid'), 'a bad signature is refused at create');
  t.match(
    String((badSignature as Error).message),
    /spec\.request: Invalid value: .*signature is invalid/,
  );
  t.ok(
    isStoreError(
      await rejection(p.store.get(CertificateSigningRequestKind, 'tampered')),
      'NotFound',
    ),
    'and not stored',
  );
  const refused = await rejection(decideCsr(p.store, 'to-team-ca', 'Denied'));
  t.ok(isStoreError(refused, 'Invalid'), 'Approved and Denied never together');
  t.match(String((refused as Error).message), /mutually exclusive/);
  const file = join(
    stateDir,
    'certificates.k8s.io',
    'certificatesigningrequests',
    '_cluster',
    'to-team-ca.json',
  );
  const persisted = JSON.parse(await readFile(file, 'utf8')) as CertificateSigningRequest;
  t.ok(persisted.status?.certificate, 'the issued CSR is in the state dir');
});
