import { X509Certificate } from 'node:crypto';
import { readCertificateFields } from './certificate-fields.js';
import { PkiError } from './errors.js';
import { decodePemBlocks } from './pem.js';

/** Parses every certificate in a PEM bundle; non-certificate blocks are an error, no blocks give []. */
export function splitPemCertificates(pem: string): X509Certificate[] {
  return decodePemBlocks(pem).map((block, i) => {
    if (block.label !== 'CERTIFICATE') {
      throw new PkiError(`PEM block ${i + 1} is "${block.label}", not a certificate`);
    }
    try {
      return new X509Certificate(block.der);
    } catch (err) {
      throw new PkiError(`cannot parse certificate ${i + 1}: ${(err as Error).message}`);
    }
  });
}

interface Node {
  cert: X509Certificate;
  issuerDer: Buffer;
  subjectDer: Buffer;
  issuer?: Node;
}

function toNode(cert: X509Certificate): Node {
  const fields = readCertificateFields(cert.raw);
  return {
    cert,
    issuerDer: Buffer.from(fields.issuerDer),
    subjectDer: Buffer.from(fields.subjectDer),
  };
}

// Go's CheckSignatureFrom plus the name link: the parent must be a CA whose
// subject is the child's issuer and whose key verifies the child's signature.
function issuedBy(child: Node, parent: Node): boolean {
  return (
    parent.cert.ca &&
    child.issuerDer.equals(parent.subjectDer) &&
    child.cert.checkIssued(parent.cert) &&
    child.cert.verify(parent.cert.publicKey)
  );
}

// Self-signed means its own name and key sign it; unlike Go this does not ask
// for CA:TRUE, so a SelfSigned-issuer leaf counts as its own CA.
function isSelfSigned(node: Node): boolean {
  return node.issuerDer.equals(node.subjectDer) && node.cert.verify(node.cert.publicKey);
}

function top(node: Node): Node {
  let n = node;
  while (n.issuer) n = n.issuer;
  return n;
}

// cert-manager's tryMergeChain: glue b under a or a under b when one's top was signed by the other's bottom.
function tryMerge(a: Node, b: Node): Node | undefined {
  const bTop = top(b);
  if (issuedBy(bTop, a) && !isSelfSigned(bTop)) {
    bTop.issuer = a;
    return b;
  }
  const aTop = top(a);
  if (issuedBy(aTop, b) && !isSelfSigned(aTop)) {
    aTop.issuer = b;
    return a;
  }
  return undefined;
}

// Merges chains pairwise until one is left; no possible merge means the certificates do not form one chain.
function link(nodes: Node[]): Node {
  let chains = nodes;
  for (;;) {
    const [first, ...rest] = chains;
    if (!first) throw new PkiError('certificate chain is empty');
    if (rest.length === 0) return first;
    const merged = mergeOnce(chains);
    if (!merged) throw new PkiError('certificate chain is malformed or broken');
    chains = merged;
  }
}

function mergeOnce(chains: Node[]): Node[] | undefined {
  for (const a of chains) {
    for (const b of chains) {
      const joined = a === b ? undefined : tryMerge(a, b);
      if (joined) return [...chains.filter((c) => c !== a && c !== b), joined];
    }
  }
  return undefined;
}

/** Orders leaf and CA certificates into one chain like cert-manager's ParseSingleCertificateChain: chainPem is leaf + intermediates (self-signed root dropped), caPem the top-most certificate. */
export function buildChain(
  leafPem: string,
  caCertificates: readonly string[],
): { chainPem: string; caPem: string } {
  const all = [leafPem, ...caCertificates].flatMap((pem) => splitPemCertificates(pem));
  const unique: X509Certificate[] = [];
  for (const c of all) if (!unique.some((u) => u.raw.equals(c.raw))) unique.push(c);
  const head = link(unique.map(toNode));
  const certs: X509Certificate[] = [];
  let root = head;
  for (let n: Node | undefined = head; n; n = n.issuer) {
    certs.push(n.cert);
    root = n;
  }
  const rootPem = root.cert.toString();
  const rootIsSelfSigned = isSelfSigned(root);
  // A lone certificate is the chain; it is also the CA only when it signed itself.
  if (certs.length === 1) return { chainPem: rootPem, caPem: rootIsSelfSigned ? rootPem : '' };
  const chain = rootIsSelfSigned ? certs.slice(0, -1) : certs;
  return { chainPem: chain.map((c) => c.toString()).join(''), caPem: rootPem };
}

/** A certificate's PEM, ending with a newline so certificates concatenate into a bundle. */
export function certificatePem(certificate: X509Certificate): string {
  const text = certificate.toString();
  return text.endsWith('\n') ? text : `${text}\n`;
}

/** NotBefore and NotAfter of the first certificate in a PEM bundle. */
export function certificateTimes(pem: string): { notBefore: Date; notAfter: Date } {
  const first = decodePemBlocks(pem).find((b) => b.label === 'CERTIFICATE');
  if (!first) throw new PkiError('no certificate PEM block found');
  const { notBefore, notAfter } = readCertificateFields(first.der);
  return { notBefore, notAfter };
}
