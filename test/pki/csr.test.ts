import t from 'tap';
import { createCsr, forgetParsedCsrs, parseCsr } from '../../src/pki/csr.js';
import {
  concat,
  contextTag,
  encodeOid,
  encodeTlv,
  rawOf,
  readChildren,
  readSingle,
  sequence,
  setOf,
  Tag,
} from '../../src/pki/der.js';
import {
  encodePrivateKey,
  generatePrivateKey,
  type KeySpec,
  publicKeysEqual,
  spkiOf,
} from '../../src/pki/keys.js';
import { decodePemBlocks, encodePem } from '../../src/pki/pem.js';
import { subjectToDer } from '../../src/pki/subject.js';
import { KeyUsageFlag } from '../../src/pki/usages.js';
import { importedUrl, moduleFileUrl } from '../support/project-files.js';
import { toCryptoKeyPair, x509 } from '../support/x509-provider.js';
import { openssl } from './fixtures/openssl.js';

const fullRequest = {
  subject: {
    commonName: 'my-service',
    organizations: ['Example Inc.'],
    organizationalUnits: ['team-a', 'team-b'],
    countries: ['DE'],
    provinces: ['Berlin'],
    localities: ['Berlin'],
    streetAddresses: ['1 Main St'],
    postalCodes: ['10115'],
    serialNumber: '42',
  },
  dnsNames: ['svc.example', 'svc.ns.svc.cluster.local'],
  ipAddresses: ['10.0.0.7', 'fd00::7'],
  uris: ['spiffe://cluster.local/ns/default/sa/app'],
  emailAddresses: ['me@example.com'],
};

t.test(
  'CSRs for every key type carry the subject and all SAN types; openssl verifies them',
  async (t) => {
    const specs: KeySpec[] = [
      { algorithm: 'RSA' },
      { algorithm: 'ECDSA' },
      { algorithm: 'ECDSA', size: 384 },
      { algorithm: 'ECDSA', size: 521 },
      { algorithm: 'Ed25519' },
    ];
    const sigAlgs = [
      'sha256WithRSAEncryption',
      'ecdsa-with-SHA256',
      'ecdsa-with-SHA384',
      'ecdsa-with-SHA512',
      'ED25519',
    ];
    for (const [i, spec] of specs.entries()) {
      const key = await generatePrivateKey(spec);
      const pem = await createCsr({ key, ...fullRequest });
      t.match(
        pem,
        /^-----BEGIN CERTIFICATE REQUEST-----\n(?:[A-Za-z0-9+/=]{64}\n)*[A-Za-z0-9+/=]{1,64}\n-----END CERTIFICATE REQUEST-----\n$/,
      );
      const text = await openssl(['req', '-in', '{csr}', '-verify', '-noout', '-text'], {
        csr: pem,
      });
      t.match(text, /verify OK/, `${spec.algorithm} ${spec.size ?? ''} verifies`);
      t.match(text, `Signature Algorithm: ${sigAlgs[i]}`);
      t.match(
        text,
        'DNS:svc.example, DNS:svc.ns.svc.cluster.local, email:me@example.com, IP Address:10.0.0.7, IP Address:FD00:0:0:0:0:0:0:7, URI:spiffe://cluster.local/ns/default/sa/app',
      );
      t.notMatch(text, /Key Usage|Basic Constraints/, 'only the SAN extension');

      const parsed = await parseCsr(pem);
      t.equal(parsed.pem, pem);
      t.ok(publicKeysEqual(parsed.publicKey, key));
      t.same(Buffer.from(parsed.subjectDer), Buffer.from(subjectToDer(fullRequest.subject)));
      t.equal(
        parsed.subject,
        'serialNumber=42,CN=my-service,OU=team-a+OU=team-b,O=Example Inc.,postalCode=10115,street=1 Main St,L=Berlin,ST=Berlin,C=DE',
      );
      t.same(parsed.sans, {
        dnsNames: fullRequest.dnsNames,
        ipAddresses: fullRequest.ipAddresses,
        uris: fullRequest.uris,
        emailAddresses: fullRequest.emailAddresses,
      });
      t.equal(parsed.sanExtension?.critical, false);
      t.equal(parsed.basicConstraints, undefined);
      t.equal(parsed.keyUsage, undefined);
      t.equal(parsed.extKeyUsages, undefined);
      t.equal(parsed.nameConstraints, undefined);
    }
  },
);

t.test('the subject printed by openssl is in Go order', async (t) => {
  const key = await generatePrivateKey({ algorithm: 'Ed25519' });
  const pem = await createCsr({ key, ...fullRequest });
  const out = await openssl(['req', '-in', '{csr}', '-noout', '-subject', '-nameopt', 'RFC2253'], {
    csr: pem,
  });
  t.equal(
    out.trim(),
    // openssl's DN_REV reverses every entry, so it prints a multi-valued RDN backwards too.
    'subject=serialNumber=42,CN=my-service,OU=team-b+OU=team-a,O=Example Inc.,postalCode=10115,street=1 Main St,L=Berlin,ST=Berlin,C=DE',
  );
});

t.test('no SANs: no extension request at all; empty subject is allowed', async (t) => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const pem = await createCsr({ key, subject: { commonName: 'only-cn' } });
  const asn1 = await openssl(['asn1parse', '-in', '{csr}'], { csr: pem });
  t.match(asn1, /cont \[ 0 \]\s*\n/, 'attributes are an empty [0]');
  t.notMatch(asn1, /Extension Request/);
  const parsed = await parseCsr(pem);
  t.same(parsed.sans, { dnsNames: [], ipAddresses: [], uris: [], emailAddresses: [] });
  t.equal(parsed.sanExtension, undefined);

  const empty = await parseCsr(await createCsr({ key, dnsNames: ['x.example'] }));
  t.equal(empty.subject, '');
  t.equal(Buffer.from(empty.subjectDer).toString('hex'), '3000');
});

t.test('a literal subject replaces the subject fields', async (t) => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const parsed = await parseCsr(
    await createCsr({ key, subject: { commonName: 'ignored' }, literalSubject: 'CN=lit,O=x' }),
  );
  t.equal(parsed.subject, 'CN=lit,O=x');
  const fallback = await parseCsr(
    await createCsr({ key, subject: { commonName: 'used' }, literalSubject: '' }),
  );
  t.equal(fallback.subject, 'CN=used');
});

t.test('bad SANs are refused when the CSR is built', async (t) => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  await t.rejects(createCsr({ key, ipAddresses: ['10.0.0.300'] }), {
    name: 'PkiError',
    message: 'invalid IP address "10.0.0.300"',
  });
  await t.rejects(createCsr({ key, uris: ['not-a-uri'] }), { message: 'invalid URI "not-a-uri"' });
  await t.rejects(createCsr({ key, literalSubject: 'XX=1' }), {
    message: /unknown attribute type "XX"/,
  });
});

t.test('a tampered CSR is rejected', async (t) => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const pem = await createCsr({ key, subject: { commonName: 'aaaa' }, dnsNames: ['x.example'] });
  const der = Buffer.from(decodePemBlocks(pem)[0]?.der ?? []);
  const at = der.indexOf('aaaa');
  der[at] = 'b'.charCodeAt(0);
  await t.rejects(parseCsr(encodePem('CERTIFICATE REQUEST', der)), {
    name: 'PkiError',
    message: 'certificate request signature is invalid',
  });
  // A CSR whose signature was made by another key is just as invalid.
  const other = await generatePrivateKey({ algorithm: 'ECDSA' });
  const otherDer = Buffer.from(
    decodePemBlocks(
      await createCsr({ key: other, subject: { commonName: 'aaaa' }, dnsNames: ['x.example'] }),
    )[0]?.der ?? [],
  );
  const spliced = Buffer.from(der);
  // Same lengths for P-256 public keys: swap the SPKI bytes in.
  const spkiOf = (b: Buffer) => b.indexOf(Buffer.from('3059301306072a8648ce3d0201', 'hex'));
  otherDer.copy(spliced, spkiOf(spliced), spkiOf(otherDer), spkiOf(otherDer) + 91);
  await t.rejects(parseCsr(encodePem('CERTIFICATE REQUEST', spliced)), {
    message: 'certificate request signature is invalid',
  });
  // Ed25519 signature with one bit flipped.
  const ed = await generatePrivateKey({ algorithm: 'Ed25519' });
  const edDer = Buffer.from(decodePemBlocks(await createCsr({ key: ed }))[0]?.der ?? []);
  edDer[edDer.length - 1] = (edDer[edDer.length - 1] ?? 0) ^ 1;
  await t.rejects(parseCsr(encodePem('CERTIFICATE REQUEST', edDer)), {
    message: 'certificate request signature is invalid',
  });
});

t.test('non-PEM, wrong PEM and bad DER are rejected', async (t) => {
  const cases: Array<[string | Buffer, RegExp]> = [
    ['', /^cannot parse certificate request: no PEM block found$/],
    [Buffer.from('hello'), /no PEM block found/],
    [
      '-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n',
      /unexpected PEM block "CERTIFICATE"/,
    ],
    [
      '-----BEGIN CERTIFICATE REQUEST-----\nMAA=\n-----END CERTIFICATE REQUEST-----\n',
      /^cannot parse certificate request: malformed DER/,
    ],
    [
      '-----BEGIN CERTIFICATE REQUEST-----\nMAM=\n-----END CERTIFICATE REQUEST-----\n',
      /malformed DER/,
    ],
    [
      '-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n',
      /malformed DER/,
    ],
  ];
  for (const [input, message] of cases) {
    await t.rejects(parseCsr(input), { name: 'PkiError', message }, String(input).slice(0, 40));
  }
});

t.test('reads BasicConstraints, KeyUsage, EKU and NameConstraints from openssl CSRs', async (t) => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const keyPem = encodePrivateKey(key, 'PKCS8');
  const pem = await openssl(
    [
      'req',
      '-new',
      '-key',
      '{key}',
      '-subj',
      '/CN=ext-test',
      '-sha256',
      '-addext',
      'basicConstraints=critical,CA:TRUE,pathlen:1',
      '-addext',
      'keyUsage=critical,digitalSignature,keyCertSign,cRLSign,decipherOnly',
      '-addext',
      'extendedKeyUsage=serverAuth,1.2.3.4',
      '-addext',
      'nameConstraints=critical,permitted;DNS:.example.com',
      '-addext',
      'subjectAltName=DNS:a.example.com,otherName:1.2.3.4;UTF8:other,IP:::ffff:10.0.0.1',
    ],
    { key: keyPem },
  );
  const parsed = await parseCsr(pem);
  t.same(parsed.basicConstraints, { isCA: true });
  t.equal(parsed.keyUsage, 1 | 32 | 64 | 256);
  t.same(parsed.extKeyUsages, ['1.3.6.1.5.5.7.3.1', '1.2.3.4']);
  t.equal(parsed.nameConstraints?.critical, true);
  t.ok((parsed.nameConstraints?.der.byteLength ?? 0) > 0);
  t.same(parsed.sans.dnsNames, ['a.example.com']);
  t.same(parsed.sans.ipAddresses, ['::ffff:10.0.0.1'], 'a 16-byte mapped address is shown as IPv6');
  t.equal(parsed.subject, 'CN=ext-test');

  const leafish = await openssl(
    [
      'req',
      '-new',
      '-key',
      '{key}',
      '-subj',
      '/CN=x',
      '-addext',
      'basicConstraints=CA:FALSE',
      '-addext',
      'keyUsage=keyEncipherment',
    ],
    { key: keyPem },
  );
  const p2 = await parseCsr(leafish);
  t.same(p2.basicConstraints, { isCA: false });
  t.equal(p2.keyUsage, 4);
});

t.test('SHA-1 and unknown signature algorithms are refused', async (t) => {
  const key = await generatePrivateKey({ algorithm: 'RSA' });
  const pem = await openssl(['req', '-new', '-key', '{key}', '-subj', '/CN=old', '-sha1'], {
    key: encodePrivateKey(key, 'PKCS1'),
  });
  await t.rejects(parseCsr(pem), {
    name: 'PkiError',
    message: 'certificate request signature is invalid: unsupported algorithm 1.2.840.113549.1.1.5',
  });
  const sha512 = await openssl(['req', '-new', '-key', '{key}', '-subj', '/CN=new', '-sha512'], {
    key: encodePrivateKey(key, 'PKCS1'),
  });
  t.equal((await parseCsr(sha512)).subject, 'CN=new');
  const pss = await openssl(
    [
      'req',
      '-new',
      '-key',
      '{key}',
      '-subj',
      '/CN=pss',
      '-sha256',
      '-sigopt',
      'rsa_padding_mode:pss',
    ],
    { key: encodePrivateKey(key, 'PKCS1') },
  );
  t.equal((await parseCsr(pss)).subject, 'CN=pss', 'RSA-PSS signatures are accepted, as Go does');
});

t.test('duplicate extensions and malformed extension values are rejected', async (t) => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  // openssl's config keeps only the last of two equal keys, so build the CSR with x509 directly.
  const ext = new x509.Extension('1.2.3.4', false, Uint8Array.of(0x05, 0x00));
  const dup = await x509.Pkcs10CertificateRequestGenerator.create({
    name: 'CN=dup',
    extensions: [ext, ext],
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    keys: await toCryptoKeyPair(key),
  });
  const pem = encodePem('CERTIFICATE REQUEST', new Uint8Array(dup.rawData));
  await t.rejects(parseCsr(pem), { name: 'PkiError', message: /duplicate extension 1\.2\.3\.4/ });
  const badKu = await openssl(
    ['req', '-new', '-key', '{key}', '-subj', '/CN=bad', '-config', '{cnf}', '-reqexts', 'ext'],
    {
      key: encodePrivateKey(key, 'PKCS8'),
      cnf: '[req]\ndistinguished_name=dn\n[dn]\n[ext]\n2.5.29.15=DER:0500\n',
    },
  );
  await t.rejects(parseCsr(badKu), {
    name: 'PkiError',
    message: /cannot parse certificate request: malformed DER/,
  });
});

t.test('structurally broken CSRs are rejected with the part that is wrong', async (t) => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const der =
    decodePemBlocks(await createCsr({ key, subject: { commonName: 'x' }, dnsNames: ['a'] }))[0]
      ?.der ?? new Uint8Array();
  const [info, sigAlg, sig] = readChildren(der, readSingle(der)).map((c) => rawOf(der, c));
  const infoTlv = readSingle(info ?? new Uint8Array());
  const [version, subject, spki, attrs] = readChildren(info ?? new Uint8Array(), infoTlv).map((c) =>
    rawOf(info ?? new Uint8Array(), c),
  );
  const csr = (parts: Array<Uint8Array | undefined>) =>
    encodePem(
      'CERTIFICATE REQUEST',
      sequence(parts.filter((p): p is Uint8Array => p !== undefined)),
    );
  const withInfo = (parts: Array<Uint8Array | undefined>) =>
    csr([sequence(parts.filter((p): p is Uint8Array => p !== undefined)), sigAlg, sig]);
  const cases: Array<[string, RegExp]> = [
    [csr([info, sigAlg]), /bad CertificationRequest$/],
    [csr([info, sigAlg, sig, sig]), /bad CertificationRequest$/],
    [withInfo([subject, spki, attrs]), /bad CertificationRequestInfo/],
    [
      csr([info, sequence([encodeTlv(Tag.NULL, new Uint8Array())]), sig]),
      /bad signature algorithm/,
    ],
    [
      withInfo([
        version,
        subject,
        sequence([sequence([encodeOid('1.2.3.4')]), encodeTlv(Tag.BIT_STRING, Uint8Array.of(0))]),
        attrs,
      ]),
      /^cannot parse certificate request: bad public key: /,
    ],
    [
      withInfo([
        version,
        subject,
        spki,
        contextTag(0, sequence([encodeTlv(Tag.NULL, new Uint8Array())]), true),
      ]),
      /bad attribute/,
    ],
  ];
  for (const [pem, message] of cases) {
    await t.rejects(parseCsr(pem), { name: 'PkiError', message });
  }
  // Structure is checked before the signature: these get as far as the signature check.
  await t.rejects(parseCsr(withInfo([version, subject, spki])), {
    message: 'certificate request signature is invalid',
  });
  const san = sequence([encodeOid('2.5.29.17'), encodeTlv(Tag.OCTET_STRING, sequence([]))]);
  const extReq = sequence([encodeOid('1.2.840.113549.1.9.14'), setOf([sequence([san])])]);
  await t.rejects(
    parseCsr(withInfo([version, subject, spki, contextTag(0, concat([extReq, extReq]), true)])),
    {
      message: /duplicate extension 2\.5\.29\.17/,
    },
  );
  // An ECDSA signature labelled as RSA cannot even be checked: still just "invalid".
  await t.rejects(
    parseCsr(
      csr([
        info,
        sequence([encodeOid('1.2.840.113549.1.1.11'), encodeTlv(Tag.NULL, new Uint8Array())]),
        sig,
      ]),
    ),
    {
      message: 'certificate request signature is invalid',
    },
  );
  // Attributes other than extensionRequest are ignored.
  const challenge = await openssl(
    ['req', '-new', '-key', '{key}', '-subj', '/CN=cp', '-config', '{cnf}'],
    {
      key: encodePrivateKey(key, 'PKCS8'),
      cnf: '[req]\ndistinguished_name=dn\nattributes=attrs\nprompt=no\n[dn]\nCN=cp\n[attrs]\nchallengePassword=secret123\n',
    },
  );
  t.equal((await parseCsr(challenge)).subject, 'CN=cp');
});

t.test(
  'usages become a critical KeyUsage and an ExtendedKeyUsage, as cert-manager encodes them',
  async (t) => {
    const key = await generatePrivateKey({ algorithm: 'ECDSA' });
    const pem = await createCsr({
      key,
      dnsNames: ['web.example.com'],
      usages: { names: ['digital signature', 'server auth', 'client auth'], isCA: true },
    });
    const parsed = await parseCsr(pem);
    t.equal(
      parsed.keyUsage,
      KeyUsageFlag.digitalSignature | KeyUsageFlag.certSign,
      'isCA adds cert sign',
    );
    t.same(parsed.extKeyUsages, ['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
    const text = await openssl(['req', '-in', '{csr}', '-noout', '-text'], { csr: pem });
    t.match(text, /X509v3 Key Usage: critical\s+Digital Signature, Certificate Sign/);
    t.match(
      text,
      /X509v3 Extended Key Usage:\s+TLS Web Server Authentication, TLS Web Client Authentication/,
    );
    const defaults = await parseCsr(
      await createCsr({ key, dnsNames: ['a'], usages: { names: [], isCA: false } }),
    );
    t.equal(
      defaults.keyUsage,
      KeyUsageFlag.digitalSignature | KeyUsageFlag.keyEncipherment,
      'no usages: the defaults',
    );
    t.equal(defaults.extKeyUsages, undefined, 'and no ExtendedKeyUsage');
    t.equal(
      (await parseCsr(await createCsr({ key, dnsNames: ['a'] }))).keyUsage,
      undefined,
      'not asked: none',
    );
  },
);

t.test(
  'otherNames and name constraints in a CSR, as openssl reads them (openssl req -text)',
  async (t) => {
    const key = await generatePrivateKey({ algorithm: 'ECDSA' });
    const pem = await createCsr({
      key,
      subject: { commonName: 'ca' },
      dnsNames: ['a.example.com'],
      otherNames: [
        { oid: '1.3.6.1.4.1.311.20.2.3', utf8Value: 'upn@example.com' },
        { oid: '1.2.3.4', utf8Value: 'ünï' },
      ],
      usages: { names: [], isCA: true },
      nameConstraints: {
        critical: true,
        permitted: { dnsDomains: ['.example.com'], ipRanges: ['10.0.0.0/8', 'fd00::/8'] },
        excluded: { emailAddresses: ['ops@example.com'], uriDomains: ['.evil.example'] },
      },
    });
    const text = await openssl(['req', '-in', '{csr}', '-verify', '-noout', '-text'], {
      csr: pem,
    });
    t.match(text, /verify OK/);
    t.match(
      text,
      /DNS:a\.example\.com, othername: UPN::upn@example\.com, othername: 1\.2\.3\.4::ünï/,
      'otherNames follow the other SANs, with their UTF-8 values',
    );
    t.match(
      text,
      /X509v3 Name Constraints: critical\s+Permitted:\s+DNS:\.example\.com\s+IP:10\.0\.0\.0\/255\.0\.0\.0\s+IP:FD00:0:0:0:0:0:0:0\/FF00:0:0:0:0:0:0:0\s+Excluded:\s+email:ops@example\.com\s+URI:\.evil\.example/,
    );
    const parsed = await parseCsr(pem);
    t.equal(parsed.nameConstraints?.critical, true);

    const plain = await createCsr({
      key,
      subject: { commonName: 'ca' },
      nameConstraints: { critical: false, excluded: { dnsDomains: ['bad.example'] } },
    });
    const plainText = await openssl(['req', '-in', '{csr}', '-noout', '-text'], { csr: plain });
    t.match(plainText, /X509v3 Name Constraints: \n/, 'not critical when the spec says so');
    t.notMatch(plainText, /Permitted:/, 'no empty permitted subtree');
    const none = await createCsr({
      key,
      subject: { commonName: 'ca' },
      nameConstraints: { critical: true, permitted: {} },
    });
    t.equal((await parseCsr(none)).nameConstraints, undefined, 'no entries: no extension');
  },
);

t.test('a CSR is signed with each signature algorithm of the CRD enum', async (t) => {
  const cases: Array<[KeySpec, string, string]> = [
    [{ algorithm: 'RSA' }, 'SHA256WithRSA', 'sha256WithRSAEncryption'],
    [{ algorithm: 'RSA' }, 'SHA384WithRSA', 'sha384WithRSAEncryption'],
    [{ algorithm: 'RSA' }, 'SHA512WithRSA', 'sha512WithRSAEncryption'],
    [{ algorithm: 'ECDSA', size: 384 }, 'ECDSAWithSHA256', 'ecdsa-with-SHA256'],
    [{ algorithm: 'ECDSA' }, 'ECDSAWithSHA384', 'ecdsa-with-SHA384'],
    [{ algorithm: 'ECDSA' }, 'ECDSAWithSHA512', 'ecdsa-with-SHA512'],
    [{ algorithm: 'Ed25519' }, 'PureEd25519', 'ED25519'],
  ];
  const keys = new Map<string, Awaited<ReturnType<typeof generatePrivateKey>>>();
  for (const [spec, name, shown] of cases) {
    const id = `${spec.algorithm}${spec.size ?? ''}`;
    const key = keys.get(id) ?? (await generatePrivateKey(spec));
    keys.set(id, key);
    const pem = await createCsr({ key, subject: { commonName: 'x' }, signatureAlgorithm: name });
    const text = await openssl(['req', '-in', '{csr}', '-verify', '-noout', '-text'], {
      csr: pem,
    });
    t.match(text, /verify OK/, `${name}: openssl verifies it`);
    t.match(text, `Signature Algorithm: ${shown}`, `${name}: ${shown}`);
    // Forgotten as made here first, or the parser would trust its own signature unchecked.
    forgetParsedCsrs();
    await t.resolves(parseCsr(pem), `${name}: our own parser verifies it`);
  }
  const rsa = keys.get('RSA');
  if (!rsa) throw new Error('no RSA key');
  await t.rejects(
    createCsr({ key: rsa, subject: { commonName: 'x' }, signatureAlgorithm: 'ECDSAWithSHA256' }),
    {
      message: 'signature algorithm ECDSAWithSHA256 cannot sign with an RSA key',
    },
  );
  await t.rejects(
    createCsr({ key: rsa, subject: { commonName: 'x' }, signatureAlgorithm: 'SHA1WithRSA' }),
    {
      message: 'unsupported signature algorithm "SHA1WithRSA"',
    },
  );
  await t.rejects(
    createCsr({ key: rsa, subject: { commonName: 'x' }, signatureAlgorithm: 'toString' }),
    {
      message: 'unsupported signature algorithm "toString"',
    },
    'no inherited property is taken for a name',
  );
});

t.test('a CSR read twice is parsed and verified once: the same frozen result', async (t) => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const pem = await createCsr({ key, subject: { commonName: 'twice' }, dnsNames: ['a.example'] });
  const first = await parseCsr(pem);
  t.equal(await parseCsr(pem), first, 'the text again: the same result');
  t.equal(await parseCsr(Buffer.from(pem, 'latin1')), first, 'the same text as bytes too');
  forgetParsedCsrs();
  const anew = await parseCsr(pem);
  t.not(anew, first, 'forgotten: parsed again');
  t.equal(await parseCsr(pem), anew);
  t.ok(Object.isFrozen(first) && Object.isFrozen(first.sans.dnsNames), 'frozen for sharing');
  t.throws(() => {
    first.sans.dnsNames.push('b.example');
  }, TypeError);
  t.ok(
    Buffer.from(first.spkiDer).equals(spkiOf(key)),
    'spkiDer is the SubjectPublicKeyInfo the request holds',
  );
});

t.test('a bad CSR fails the same way every time it is read', async (t) => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const pem = await createCsr({ key, subject: { commonName: 'aaaa' } });
  const der = Buffer.from(decodePemBlocks(pem)[0]?.der ?? []);
  der[der.indexOf('aaaa')] = 'b'.charCodeAt(0);
  const tampered = encodePem('CERTIFICATE REQUEST', der);
  for (let i = 0; i < 3; i++) {
    await t.rejects(parseCsr(tampered), {
      name: 'PkiError',
      reason: 'x509: ECDSA verification failure',
      message: 'certificate request signature is invalid',
    });
    await t.rejects(parseCsr('not a csr'), {
      message: 'cannot parse certificate request: no PEM block found',
    });
  }
});

t.test('the CSRs held are bounded: many distinct ones still parse, each to its own', async (t) => {
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const pems: string[] = [];
  for (let i = 0; i < 300; i++) {
    pems.push(await createCsr({ key, subject: { commonName: `cn-${i}` } }));
  }
  const first = await parseCsr(pems[0] ?? '');
  for (const pem of pems) await parseCsr(pem);
  const again = await parseCsr(pems[0] ?? '');
  t.not(again, first, 'the oldest was evicted (256 held) and parsed anew');
  t.equal(again.subject, first.subject);
});

t.test('a CSR made here is read without checking its signature again', async (t) => {
  let checks = 0;
  const real = await import('../../src/pki/csr-signature.js');
  const mocked = await t.mockImport<typeof import('../../src/pki/csr.js')>(
    moduleFileUrl('src/pki/csr.ts'),
    {
      [importedUrl('src/pki/csr-signature.ts')]: {
        ...real,
        csrSignatureProblem: (request: Parameters<typeof real.csrSignatureProblem>[0]) => {
          checks++;
          return real.csrSignatureProblem(request);
        },
      },
    },
  );
  const key = await generatePrivateKey({ algorithm: 'ECDSA' });
  const pem = await mocked.createCsr({ key, subject: { commonName: 'here' }, dnsNames: ['h.x'] });
  const made = await mocked.parseCsr(pem);
  t.equal(checks, 0, 'signed by this process a moment ago: not checked');
  mocked.forgetParsedCsrs();
  const checked = await mocked.parseCsr(pem);
  t.equal(checks, 1, 'forgotten, as a CSR from elsewhere: checked');
  t.not(checked, made);
  t.same(
    { ...checked, publicKey: checked.publicKey.export({ format: 'jwk' }) },
    { ...made, publicKey: made.publicKey.export({ format: 'jwk' }) },
    'the same fields and key either way',
  );
  // One byte off what was made here is checked, and refused.
  const again = await mocked.createCsr({ key, subject: { commonName: 'aaaa' } });
  const der = Buffer.from(decodePemBlocks(again)[0]?.der ?? []);
  der[der.indexOf('aaaa')] = 'b'.charCodeAt(0);
  await t.rejects(mocked.parseCsr(encodePem('CERTIFICATE REQUEST', der)), {
    message: 'certificate request signature is invalid',
  });
  t.equal(checks, 2);
});
