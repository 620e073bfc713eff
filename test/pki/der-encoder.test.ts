import type { KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import t from 'tap';
import { podSigningRequest } from '../../src/issuer/podcertificaterequests/pod-certificate-profile.js';
import {
  type CertificateSubject,
  type CertificateTemplate,
  createSelfSignedCa,
  prepareSigner,
  signCertificate,
} from '../../src/pki/certificate.js';
import { type CsrRequest, createCsr, forgetParsedCsrs, parseCsr } from '../../src/pki/csr.js';
import { childrenOf, rawOf, readSingle, Tag } from '../../src/pki/der.js';
import { decodePrivateKey } from '../../src/pki/keys.js';
import { decodePemBlocks } from '../../src/pki/pem.js';
import { projectPath } from '../support/project-files.js';
import { openssl } from './fixtures/openssl.js';

// The certificates and requests src/pki writes, compared with what the @peculiar/x509 based
// encoder it replaced wrote for the same calls (test/pki/fixtures/encoder-fixtures.json,
// captured from commit 0f3d4b4 with these keys, inputs and times): every byte equal but the
// random serial number and the signature value (RSA PKCS#1 v1.5 and Ed25519 signatures are
// deterministic, so those requests are equal whole), and openssl accepts each one.

interface CsrCase {
  name: string;
  request: Omit<CsrRequest, 'key'> & { key: string };
  pem: string;
}
interface CertificateCase {
  name: string;
  ca: string;
  csr: string;
  template: Omit<CertificateTemplate, 'notAfterLimit'> & { notAfterLimit?: string };
  now: string;
  signer: 'pair' | 'prepared' | 'self';
  pem: string;
}
interface Fixtures {
  keys: Record<string, string>;
  cas: Record<string, { commonName: string; durationMs: number; now: string; pem: string }>;
  csrs: CsrCase[];
  certificates: CertificateCase[];
}

const fixtures = JSON.parse(
  await readFile(projectPath('test/pki/fixtures/encoder-fixtures.json'), 'utf8'),
) as Fixtures;
const keys = new Map(
  Object.entries(fixtures.keys).map(([name, pem]) => [name, decodePrivateKey(pem)]),
);
function key(name: string): KeyObject {
  const found = keys.get(name);
  if (!found) throw new Error(`no fixture key ${name}`);
  return found;
}

const der = (pem: string): Uint8Array => decodePemBlocks(pem)[0]?.der ?? new Uint8Array();
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

/** The three parts of a signed structure (to-be-signed, algorithm, signature) as hex DER. */
function signedParts(pem: string): { tbs: string; algorithm: string; signature: string } {
  const buf = der(pem);
  const [tbs, algorithm, signature, extra] = childrenOf(
    buf,
    readSingle(buf),
    Tag.SEQUENCE,
    'signed',
  );
  if (!tbs || !algorithm || signature?.tag !== Tag.BIT_STRING || extra)
    throw new Error('not a signed structure');
  return {
    tbs: hex(rawOf(buf, tbs)),
    algorithm: hex(rawOf(buf, algorithm)),
    signature: hex(rawOf(buf, signature)),
  };
}

/** The TBSCertificate's fields as hex DER, the serial number (index 1) replaced by its length check. */
function tbsFieldsButSerial(pem: string): string[] {
  const buf = der(pem);
  const [tbs] = childrenOf(buf, readSingle(buf), Tag.SEQUENCE, 'certificate');
  if (!tbs) throw new Error('no TBSCertificate');
  return childrenOf(buf, tbs, Tag.SEQUENCE, 'TBSCertificate').map((field, i) => {
    if (i !== 1) return hex(rawOf(buf, field));
    // Go's serial: 20 random bytes, top bit clear, minimal DER: at most 20 content bytes, positive.
    const content = buf.subarray(field.contentStart, field.end);
    const ok =
      field.tag === Tag.INTEGER &&
      content.length >= 1 &&
      content.length <= 20 &&
      (content[0] as number) < 0x80 &&
      // Minimal: a leading zero only where the next byte's top bit would make it negative.
      (content.length === 1 || content[0] !== 0 || (content[1] as number) >= 0x80);
    return ok ? 'serial: a positive INTEGER of at most 20 bytes' : `bad serial ${hex(content)}`;
  });
}

const deterministic = (name: string): boolean => !/^p(256|384|521)\b/.test(name);

// The openssl text of each certificate with the parts that differ by design masked.
function maskedText(text: string): string[] {
  return text
    .split(/^\d+: Certificate\n/m)
    .filter((block) => block.trim() !== '' && !/^Total found/.test(block.trim()))
    .map((block) =>
      block
        .replace(/Serial Number:\n\s+[0-9a-f:]+\n/, 'Serial Number: (random)\n')
        .replace(/Signature Value:\n(\s+[0-9a-f:]+\n)+/, 'Signature Value: (signature)\n')
        .replace(/Total found: \d+\n?/, ''),
    );
}

const cpuAtStart = process.cpuUsage();
const openslCalls = { count: 0 };
async function tool(args: string[], files: Record<string, string>): Promise<string> {
  openslCalls.count++;
  return openssl(args, files);
}

t.test(
  'each request is the old encoder’s, byte for byte but an ECDSA signature, and openssl verifies it',
  async (t) => {
    const checks: Promise<void>[] = [];
    for (const c of fixtures.csrs) {
      const pem = await createCsr({ ...c.request, key: key(c.request.key) } as CsrRequest);
      const now = signedParts(pem);
      const old = signedParts(c.pem);
      t.equal(now.tbs, old.tbs, `${c.name}: CertificationRequestInfo`);
      t.equal(now.algorithm, old.algorithm, `${c.name}: signature AlgorithmIdentifier`);
      if (deterministic(c.name)) t.equal(now.signature, old.signature, `${c.name}: signature`);
      // Forgotten as made here first, or the parser would trust its own signature unchecked.
      forgetParsedCsrs();
      await t.resolves(parseCsr(pem), `${c.name}: our parser verifies it`);
      checks.push(
        tool(['req', '-in', '{csr}', '-noout', '-verify'], { csr: pem }).then((out) => {
          t.match(out, /verify OK/, `${c.name}: openssl req -verify`);
        }),
      );
    }
    await Promise.all(checks);
  },
);

/** The inputs a certificate case signs: the subject (a request or a pod's) and the signer. */
async function certificateFor(c: CertificateCase, caPems: Map<string, string>): Promise<string> {
  let subject: CertificateSubject;
  const { notAfterLimit, ...rest } = c.template;
  const template: CertificateTemplate = {
    ...rest,
    ...(notAfterLimit !== undefined && { notAfterLimit: new Date(notAfterLimit) }),
  };
  if (c.csr.startsWith('pod:')) {
    subject = podSigningRequest({
      publicKey: key(c.csr.slice(4)),
      spiffeId: 'spiffe://cluster.local/ns/ns1/sa/sa1',
      durationMs: template.durationMs,
    }).subject;
  } else {
    const csr = fixtures.csrs.find((r) => r.name === c.csr);
    if (!csr) throw new Error(`no fixture request ${c.csr}`);
    subject = await parseCsr(csr.pem);
  }
  const pair = { certificatePem: caPems.get(c.ca) ?? '', key: key(c.ca) };
  const now = new Date(c.now);
  if (c.signer === 'self') {
    const own = fixtures.csrs.find((r) => r.name === c.csr)?.request.key ?? '';
    return signCertificate(subject, template, { selfSigned: key(own) }, now);
  }
  return signCertificate(
    subject,
    template,
    c.signer === 'prepared' ? await prepareSigner(pair) : pair,
    now,
  );
}

t.test(
  'each certificate is the old encoder’s but serial and signature; openssl verifies and prints the same',
  async (t) => {
    const caPems = new Map<string, string>();
    const written: Array<{ name: string; pem: string; old: string; anchor: string }> = [];
    for (const [name, ca] of Object.entries(fixtures.cas)) {
      const pem = await createSelfSignedCa({
        key: key(name),
        commonName: ca.commonName,
        durationMs: ca.durationMs,
        now: new Date(ca.now),
      });
      caPems.set(name, pem);
      written.push({ name: `${name} self-signed CA`, pem, old: ca.pem, anchor: pem });
    }
    for (const c of fixtures.certificates) {
      const pem = await certificateFor(c, caPems);
      written.push({
        name: c.name,
        pem,
        old: c.pem,
        anchor: c.signer === 'self' ? pem : (caPems.get(c.ca) ?? ''),
      });
    }
    for (const w of written) {
      t.same(tbsFieldsButSerial(w.pem), tbsFieldsButSerial(w.old), `${w.name}: TBSCertificate`);
      t.equal(signedParts(w.pem).algorithm, signedParts(w.old).algorithm, `${w.name}: algorithm`);
    }

    // One `openssl verify` per trust anchor: it takes many certificates at once. The fixtures'
    // times are fixed (some past, some after 2050, when the CAs have expired), so validity is
    // compared in the text below and not checked against the clock here.
    const groups = new Map<string, typeof written>();
    for (const w of written) {
      const group = w.anchor;
      groups.set(group, [...(groups.get(group) ?? []), w]);
    }
    const verified = [...groups.values()].map(async (group) => {
      const [first] = group;
      if (!first) return;
      const files: Record<string, string> = { anchor: first.anchor };
      for (const [i, w] of group.entries()) files[`c${i}`] = w.pem;
      const out = await tool(
        ['verify', '-no_check_time', '-CAfile', '{anchor}', ...group.map((_, i) => `{c${i}}`)],
        files,
      );
      for (const [i, w] of group.entries())
        t.match(out, new RegExp(`/c${i}: OK\\n`), `${w.name}: openssl verify`);
    });
    const [now, old] = await Promise.all([
      tool(['storeutl', '-noout', '-text', '-certs', '{all}'], {
        all: written.map((w) => w.pem).join(''),
      }),
      tool(['storeutl', '-noout', '-text', '-certs', '{all}'], {
        all: written.map((w) => w.old).join(''),
      }),
      ...verified,
    ]);
    const nowTexts = maskedText(now ?? '');
    const oldTexts = maskedText(old ?? '');
    t.equal(nowTexts.length, written.length, 'openssl printed every certificate');
    for (const [i, w] of written.entries())
      t.equal(nowTexts[i], oldTexts[i], `${w.name}: openssl x509 -text shows the same fields`);
    t.match(nowTexts.join(''), /GeneralizedTime|2050 GMT/, 'the 2050 cases are among them');
  },
);

t.teardown(() => {
  const { user, system } = process.cpuUsage(cpuAtStart);
  t.comment(
    `der-encoder: ${openslCalls.count} openssl runs; ${Math.round((user + system) / 1000)} ms CPU in this process`,
  );
});
