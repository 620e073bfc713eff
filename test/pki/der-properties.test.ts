import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { domainToASCII } from 'node:url';
import fc from 'fast-check';
import t from 'tap';
import { createSelfSignedCa, prepareSigner, signCertificate } from '../../src/pki/certificate.js';
import { readCertificateFields } from '../../src/pki/certificate-fields.js';
import { createCsrSync, parseCsrSync } from '../../src/pki/csr.js';
import { encodeTime, encodeTlv, readSingle, Tag } from '../../src/pki/der.js';
import { ExtensionOid } from '../../src/pki/extensions.js';
import { generatePrivateKey } from '../../src/pki/keys.js';
import { decodePemBlocks } from '../../src/pki/pem.js';
import {
  canonicalIpAddress,
  decodeSubjectAltNames,
  encodeSubjectAltNames,
} from '../../src/pki/san.js';
import { parseName, type SubjectFields, subjectFieldsOf } from '../../src/pki/subject.js';

// What src/pki encodes, read back by our own parser and by node's X509Certificate (OpenSSL),
// for generated names, SAN lists, lengths and times. Runs are few and seeded by fast-check
// per run; a failure prints the seed and the shrunk input to replay it.

const DAY = 86_400_000;
const caKey = await generatePrivateKey({ algorithm: 'ECDSA' });
const signer = await prepareSigner({
  certificatePem: await createSelfSignedCa({
    key: caKey,
    commonName: 'property CA',
    durationMs: 3650 * DAY,
  }),
  key: caKey,
});
const leafKey = await generatePrivateKey({ algorithm: 'ECDSA' });
const leafTemplate = { durationMs: DAY, isCA: false, usages: ['digital signature', 'server auth'] };

const der = (pem: string): Uint8Array => decodePemBlocks(pem)[0]?.der ?? new Uint8Array();

/** The first length octet of a DER element: the length itself, or 0x81/0x82/0x83 for the long forms. */
function lengthForm(bytes: Uint8Array): number {
  return bytes[1] as number;
}
const FORMS: Array<{ name: string; min: number; max: number; first: (n: number) => number }> = [
  { name: 'short', min: 0, max: 127, first: (n) => n },
  { name: '0x81', min: 128, max: 255, first: () => 0x81 },
  { name: '0x82', min: 256, max: 65_535, first: () => 0x82 },
  { name: '0x83', min: 65_536, max: 70_000, first: () => 0x83 },
];

t.test('every DER length form is written minimally and read back', (t) => {
  for (const form of FORMS) {
    fc.assert(
      fc.property(
        fc.integer({ min: form.min, max: form.max }),
        fc.integer({ min: 0, max: 255 }),
        (length, fill) => {
          const content = new Uint8Array(length).fill(fill);
          const tlv = encodeTlv(Tag.OCTET_STRING, content);
          const read = readSingle(tlv);
          return (
            lengthForm(tlv) === form.first(length) &&
            read.end - read.contentStart === length &&
            Buffer.from(tlv.subarray(read.contentStart)).equals(content)
          );
        },
      ),
      { numRuns: 20 },
    );
    t.pass(`${form.name} lengths`);
  }
  t.end();
});

// Node's multi-line subject escapes RFC 2253's specials, a leading '#' or space and a trailing
// space (OpenSSL's do_buf with ASN1_STRFLGS_ESC_2253).
function nodeEscaped(value: string): string {
  const chars = [...value];
  return chars
    .map((c, i) => {
      if (/[,+"\\<>;]/.test(c)) return `\\${c}`;
      // OpenSSL's last-character rule replaces the first-character one: a lone '#' stays.
      if (i === chars.length - 1) return c === ' ' ? `\\${c}` : c;
      if (i === 0 && (c === '#' || c === ' ')) return `\\${c}`;
      return c;
    })
    .join('');
}
const NODE_NAMES: Record<string, string> = {
  '2.5.4.6': 'C',
  '2.5.4.8': 'ST',
  '2.5.4.7': 'L',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '2.5.4.3': 'CN',
};

// Printable text of any script (no control characters: node prints those escaped as bytes).
const text = (maxLength: number) =>
  fc
    .string({ unit: 'grapheme', minLength: 1, maxLength })
    .filter((s) => !/[\p{Cc}\p{Cs}]/u.test(s));
const subjects = fc.record(
  {
    commonName: text(64),
    organizations: fc.array(text(300), { minLength: 1, maxLength: 3 }),
    organizationalUnits: fc.array(text(20), { maxLength: 2 }),
    localities: fc.array(text(20), { maxLength: 2 }),
    countries: fc.array(fc.stringMatching(/^[A-Z]{2}$/), { maxLength: 1 }),
  },
  { requiredKeys: ['commonName'] },
);

t.test(
  'UTF-8 names up to 300 characters a value: our parser and node read what we wrote',
  async (t) => {
    await fc.assert(
      fc.asyncProperty(subjects, async (fields: SubjectFields) => {
        const csr = parseCsrSync(createCsrSync({ key: leafKey, subject: fields }));
        const pem = await signCertificate(csr, leafTemplate, signer);
        const subjectDer = readCertificateFields(der(pem)).subjectDer;
        const read = subjectFieldsOf(subjectDer);
        const sorted = (l: readonly string[] | undefined) => [...(l ?? [])].sort();
        // Each field's values are one multi-valued RDN, so DER's SET OF order is theirs.
        assert.equal(read.commonName, fields.commonName);
        for (const key of [
          'organizations',
          'organizationalUnits',
          'localities',
          'countries',
        ] as const)
          assert.deepEqual(sorted(read[key]), sorted(fields[key]), key);
        const expected = parseName(subjectDer)
          .map((rdn) =>
            rdn
              .map(
                (a) => `${NODE_NAMES[a.oid]}=${nodeEscaped(Buffer.from(a.value).toString('utf8'))}`,
              )
              .join(' + '),
          )
          .join('\n');
        assert.equal(new X509Certificate(pem).subject, expected, 'node reads the same subject');
      }),
      {
        numRuns: 12,
        examples: [
          [{ commonName: '#' }],
          [{ commonName: ' ' }],
          [{ commonName: '# a, b+c; "d" <e> \\ ', organizations: ['Ünïcode 名前 🔐'] }],
        ],
      },
    );
    t.pass('every name read back by both');
  },
);

// DNS labels: ASCII, or any script turned into its IDNA A-label (xn--...) as a SAN must hold.
const label = fc.oneof(
  fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?$/),
  text(8)
    .map((s) => domainToASCII(`${s}.example`).split('.')[0] ?? '')
    // What IDNA lets through but a host name may not hold ('*', '$', ...) is no DNS SAN.
    .filter((l) => /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/.test(l) && l.length <= 63),
);
const dnsName = fc
  .array(label, { minLength: 1, maxLength: 3 })
  .map((labels) => `${labels.filter((l) => l !== '').join('.')}.example`.replace(/^\./, ''));
const uri = fc
  .webUrl({ withQueryParameters: true, withFragments: true })
  .filter((u) => !/[",]/.test(u));
const sanLists = (most: number) =>
  fc.record({
    dnsNames: fc.array(dnsName, { maxLength: most }),
    ipAddresses: fc.array(fc.oneof(fc.ipV4(), fc.ipV6()), { maxLength: most }),
    uris: fc.array(uri, { maxLength: most }),
    emailAddresses: fc.array(fc.emailAddress(), { maxLength: most }),
    otherNames: fc.array(
      fc.record({
        oid: fc.constantFrom('1.3.6.1.4.1.311.20.2.3', '1.2.3.4.5'),
        utf8Value: text(30),
      }),
      { maxLength: most },
    ),
  });
type SanLists = typeof sanLists extends (n: number) => fc.Arbitrary<infer T> ? T : never;

/** The content length of the GeneralNames SEQUENCE these lists encode to. */
function sanContentLength(sans: SanLists): number {
  const tlv = new Uint8Array(encodeSubjectAltNames(sans));
  const read = readSingle(tlv);
  return read.end - read.contentStart;
}

/** The lists with DNS names of 50 characters (52 bytes encoded) added until the SAN is min bytes long. */
function padded(sans: SanLists, min: number): SanLists {
  const missing = Math.max(0, min - sanContentLength(sans));
  const padding = Array.from(
    { length: Math.ceil(missing / 52) },
    (_, i) => `pad-${String(i).padStart(6, '0')}-${'p'.repeat(31)}.example`,
  );
  return { ...sans, dnsNames: [...sans.dnsNames, ...padding] };
}

// Node prints a SAN value in quotes (JSON string syntax) when it holds a separator or a quote.
function nodeSanValues(pem: string, prefix: string): string[] {
  const out: string[] = [];
  const pattern = new RegExp(`(?:^|, )${prefix}:("(?:[^"\\\\]|\\\\.)*"|[^,]*)`, 'g');
  for (const [, value = ''] of (new X509Certificate(pem).subjectAltName ?? '').matchAll(pattern))
    out.push(value.startsWith('"') ? (JSON.parse(value) as string) : value);
  return out;
}

for (const form of FORMS) {
  t.test(
    `SAN lists in the ${form.name} length form: our parser and node read what we wrote`,
    async (t) => {
      await fc.assert(
        fc.asyncProperty(sanLists(form.name === 'short' ? 1 : 3), async (generated) => {
          const sans = padded(generated, form.min);
          const length = sanContentLength(sans);
          fc.pre(length <= form.max);
          const csrPem = createCsrSync({ key: leafKey, ...sans });
          const csr = parseCsrSync(csrPem);
          const ips = sans.ipAddresses.map(canonicalIpAddress);
          assert.deepEqual(csr.sans, {
            dnsNames: sans.dnsNames,
            ipAddresses: ips,
            uris: sans.uris,
            emailAddresses: sans.emailAddresses,
          });
          const pem = await signCertificate(csr, leafTemplate, signer);
          const san = readCertificateFields(der(pem)).extensions.get(ExtensionOid.subjectAltName);
          if (!csr.sanExtension) {
            assert.ok(!san, 'no SANs, no extension');
            return;
          }
          assert.deepEqual(
            san?.value,
            new Uint8Array(csr.sanExtension.der),
            'the certificate copies the SAN extension',
          );
          assert.deepEqual(decodeSubjectAltNames(san?.value ?? new Uint8Array()), csr.sans);
          assert.equal(
            lengthForm(san?.value ?? new Uint8Array()),
            form.first(length),
            'length form',
          );
          const cert = new X509Certificate(pem);
          for (const name of sans.dnsNames.slice(0, 6))
            assert.equal(cert.checkHost(name, { subject: 'never' }), name, `node: DNS ${name}`);
          for (const ip of sans.ipAddresses) assert.ok(cert.checkIP(ip), `node: IP ${ip}`);
          for (const email of sans.emailAddresses)
            assert.equal(
              cert.checkEmail(email, { subject: 'never' }),
              email,
              `node: email ${email}`,
            );
          assert.deepEqual(nodeSanValues(pem, 'URI'), sans.uris, 'node: URIs');
        }),
        { numRuns: form.name === '0x83' ? 2 : 6 },
      );
      t.pass('every SAN list read back by both');
    },
  );
}

t.test(
  'times: UTCTime through 2049, GeneralizedTime from 2050, both read back to the second',
  async (t) => {
    await fc.assert(
      fc.asyncProperty(
        fc.date({
          min: new Date('1970-01-01T00:00:00Z'),
          max: new Date('2200-01-01T00:00:00Z'),
          noInvalidDate: true,
        }),
        fc.integer({ min: 1, max: 400 * 365 * DAY }),
        async (now, durationMs) => {
          const notAfter = new Date(now.getTime() + durationMs);
          const expectedTag = (d: Date) =>
            d.getUTCFullYear() < 2050 ? Tag.UTC_TIME : Tag.GENERALIZED_TIME;
          assert.equal(encodeTime(now)[0], expectedTag(now), `${now.toISOString()}`);
          const csr = parseCsrSync(
            createCsrSync({ key: leafKey, subject: { commonName: 'time' } }),
          );
          const pem = await signCertificate(
            csr,
            { ...leafTemplate, durationMs },
            { selfSigned: leafKey },
            now,
          );
          const fields = readCertificateFields(der(pem));
          const second = (d: Date) => Math.floor(d.getTime() / 1000) * 1000;
          assert.equal(fields.notBefore.getTime(), second(now));
          assert.equal(fields.notAfter.getTime(), second(notAfter));
          const cert = new X509Certificate(pem);
          assert.equal(Date.parse(cert.validFrom), second(now), 'node: notBefore');
          assert.equal(Date.parse(cert.validTo), second(notAfter), 'node: notAfter');
        },
      ),
      {
        numRuns: 20,
        examples: [
          [new Date('2049-12-31T23:59:59.999Z'), 1],
          [new Date('2050-01-01T00:00:00Z'), 1000],
        ],
      },
    );
    t.pass('every time read back by both');
  },
);
