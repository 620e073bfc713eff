// The docs' runnable shell blocks, run verbatim against a real plugin started as `npm start --
// --manifests examples` starts it, and the manifests of examples/ checked by what a plugin
// that loaded them issues (docs/design.md, "Documentation and its runnable blocks"). One
// plugin for the whole file: each block's cost is the CLI calls it makes.
import { spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { chmod, cp, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import t from 'tap';
import { parseAllDocuments } from 'yaml';
import { MAIN, NODE_ARGS, runCli, startCommand } from '../support/cli-process.js';
import { until } from '../support/eventually.js';
import { projectPath } from '../support/project-files.js';
import { tempDir } from '../support/temp-dir.js';

/** The line that marks the next fenced block as runnable (docs/design.md). */
const MARKER = '<!-- runnable -->';

interface Block {
  /** 1-based line of the block's first command. */
  line: number;
  script: string;
}

/**
 * The runnable blocks of a markdown text: the ```sh block right after each marker line. A
 * marker not followed by one is an error, so a typo cannot make a block silently unchecked.
 */
function runnableBlocks(text: string): Block[] {
  const lines = text.split('\n');
  const blocks: Block[] = [];
  lines.forEach((line, index) => {
    // Exactly the marker at the start of a line: an indented one is an example of it.
    if (line !== MARKER) return;
    if (lines[index + 1]?.trim() !== '```sh') {
      throw new Error(`line ${index + 1}: ${MARKER} must be followed by a \`\`\`sh block`);
    }
    const end = lines.findIndex((l, i) => i > index + 1 && l.trim() === '```');
    if (end < 0) throw new Error(`line ${index + 2}: the runnable block is not closed`);
    blocks.push({ line: index + 3, script: lines.slice(index + 2, end).join('\n') });
  });
  return blocks;
}

t.test('runnableBlocks finds marked sh blocks only and refuses a marker without one', (t) => {
  const cases: Array<{ name: string; text: string; want: Block[] | string }> = [
    { name: 'no marker', text: '```sh\nls\n```\n', want: [] },
    { name: 'an indented marker is an example', text: `    ${MARKER}\n    \`\`\`yaml\n`, want: [] },
    {
      name: 'two marked, one not',
      text: `${MARKER}\n\`\`\`sh\na\nb\n\`\`\`\n\`\`\`sh\nc\n\`\`\`\n${MARKER}\n\`\`\`sh\nd\n\`\`\``,
      want: [
        { line: 3, script: 'a\nb' },
        { line: 11, script: 'd' },
      ],
    },
    {
      name: 'marker before another language',
      text: `x\n${MARKER}\n\`\`\`yaml\na: 1\n\`\`\``,
      want: `line 2: ${MARKER} must be followed by a \`\`\`sh block`,
    },
    {
      name: 'unclosed',
      text: `${MARKER}\n\`\`\`sh\nls\n`,
      want: 'line 2: the runnable block is not closed',
    },
  ];
  for (const c of cases) {
    if (typeof c.want === 'string')
      t.throws(() => runnableBlocks(c.text), { message: c.want }, c.name);
    else t.same(runnableBlocks(c.text), c.want, c.name);
  }
  t.end();
});

/** README.md, then docs/*.md in name order: the order the blocks run in. */
async function documentationFiles(): Promise<string[]> {
  const pages = (await readdir(projectPath('docs'))).filter((n) => n.endsWith('.md')).sort();
  return ['README.md', ...pages.map((n) => join('docs', n))];
}

/** The flags `npm start` gives `cert-csi`: package.json's start script after its command. */
async function startScriptArgs(): Promise<string[]> {
  const pkg = JSON.parse(await readFile(projectPath('package.json'), 'utf8')) as {
    bin: Record<string, string>;
    scripts: Record<string, string>;
  };
  const [node, bin, ...args] = (pkg.scripts.start ?? '').split(/\s+/);
  if (node !== 'node' || bin !== pkg.bin['cert-csi']) {
    throw new Error(`npm start is not "node ${pkg.bin['cert-csi']} ...": ${pkg.scripts.start}`);
  }
  return args;
}

/** Runs a block as a reader would paste it into bash, stopping at its first failing command. */
function runBlock(script: string, cwd: string, path: string) {
  return new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', script], {
      cwd,
      env: { ...process.env, PATH: path },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 150_000,
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('close', (code) => resolve({ code, output }));
  });
}

type Yaml = Record<string, unknown>;

async function yamlDocuments(file: string): Promise<Yaml[]> {
  return parseAllDocuments(await readFile(file, 'utf8')).map((d) => d.toJS() as Yaml);
}

/** An object the plugin persisted in its state dir (one JSON file per object). */
async function stored(stateDir: string, ...path: string[]): Promise<Yaml | undefined> {
  return readFile(join(stateDir, ...path), 'utf8').then(
    (text) => JSON.parse(text) as Yaml,
    () => undefined,
  );
}

/** The certificate a Secret in the state dir holds under key, once it exists. */
async function secretCertificate(stateDir: string, namespace: string, name: string, key: string) {
  const secret = await until(() => stored(stateDir, 'core', 'secrets', namespace, `${name}.json`), {
    what: `Secret ${namespace}/${name}`,
    timeoutMs: 60_000,
    intervalMs: 100,
  });
  const data = secret.data as Record<string, string>;
  return new X509Certificate(Buffer.from(data[key] ?? '', 'base64'));
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes. */
function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replaceAll(' ', '-');
}

/** The anchors of a markdown text's headings (outside fenced blocks). */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = fenced ? undefined : /^#{1,6} (.*)$/.exec(line)?.[1];
    if (heading !== undefined) anchors.add(headingAnchor(heading));
  }
  return anchors;
}

t.test('headingAnchor is the anchor GitHub gives a heading', (t) => {
  const cases: Array<[string, string]> = [
    ['Keys on tmpfs', 'keys-on-tmpfs'],
    ['One instance, one CA', 'one-instance-one-ca'],
    ['Pod readiness and `${POD_IP}`', 'pod-readiness-and-pod_ip'],
    ['CA certificates for volumes (`is-ca`)', 'ca-certificates-for-volumes-is-ca'],
    [
      "Deviations from cert-manager's issuers, on purpose",
      'deviations-from-cert-managers-issuers-on-purpose',
    ],
  ];
  for (const [heading, anchor] of cases) t.equal(headingAnchor(heading), anchor, heading);
  t.end();
});

t.test(
  'every relative link of the docs names a file of the repository, and its heading',
  async (t) => {
    for (const file of await documentationFiles()) {
      const text = await readFile(projectPath(file), 'utf8');
      t.notMatch(text, '../shared', `${file} names nothing outside the repository`);
      for (const [, link = ''] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(link)) continue;
        const [path = '', anchor] = link.split('#');
        const target = path === '' ? projectPath(file) : projectPath(dirname(file), path);
        t.notOk(
          relative(projectPath(), target).startsWith('..'),
          `${file}: ${link} stays inside the repository`,
        );
        const found = await stat(target).then(
          () => true,
          () => false,
        );
        t.ok(found, `${file}: ${link} exists`);
        if (found && anchor && target.endsWith('.md')) {
          const anchors = anchorsOf(await readFile(target, 'utf8'));
          t.ok(anchors.has(anchor), `${file}: ${link} names a heading of ${path || file}`);
        }
      }
    }
  },
);

t.test('the docs and the examples work against a plugin started as npm start does', async (t) => {
  const dir = await tempDir(t, 'cert-csi-docs-');
  await cp(projectPath('examples'), join(dir, 'examples'), { recursive: true });
  // `npx cert-csi ...` as from a clone, on this checkout's built CLI; nothing else answers
  // to npx, and there is no bare `cert-csi`: the docs use one form.
  const bin = join(dir, 'bin');
  await mkdir(bin);
  // Without tap's coverage hook (NODE_OPTIONS): the commands' code is covered by their own
  // tests, and the hook triples the cost of each of the block's CLI processes.
  const cli = ['env', '-u', 'NODE_OPTIONS', process.execPath, ...NODE_ARGS, MAIN]
    .map((a) => `'${a}'`)
    .join(' ');
  await writeFile(
    join(bin, 'npx'),
    `#!/bin/sh\nif [ "$1" = cert-csi ]; then shift; exec ${cli} "$@"; fi\necho "npx $1: not in the docs test" >&2\nexit 127\n`,
  );
  await chmod(join(bin, 'npx'), 0o755);

  const plugin = await startCommand(
    [...(await startScriptArgs()), '--manifests', 'examples'],
    'cert-csi node plugin started',
    { cwd: dir },
  );
  t.teardown(() => plugin.stop());

  const path = `${bin}:${process.env.PATH ?? ''}`;
  let count = 0;
  for (const file of await documentationFiles()) {
    for (const block of runnableBlocks(await readFile(projectPath(file), 'utf8'))) {
      count++;
      const { code, output } = await runBlock(block.script, dir, path);
      t.equal(code, 0, `${file}:${block.line} runs`, { output });
    }
  }
  t.ok(count >= 4, `the docs have their runnable blocks (${count})`);
  const readme = runnableBlocks(await readFile(projectPath('README.md'), 'utf8'));
  t.ok(readme.length > 0, "README's try-it is runnable");

  const state = join(dir, '.cert-csi', 'state');
  const ca = await secretCertificate(state, 'default', 'example-ca', 'tls.crt');
  t.ok(ca.ca, 'examples/ca-issuer.yaml: the CA Certificate issued a CA into Secret example-ca');
  const web = await secretCertificate(state, 'default', 'example-web-tls', 'tls.crt');
  t.ok(web.verify(ca.publicKey), 'examples/certificate.yaml: signed by the CA Issuer');
  t.match(web.subjectAltName, 'DNS:web.default.svc', 'with its dnsNames');

  const roots = (await yamlDocuments(projectPath('examples/trust-bundle-configmap.yaml')))[0] as {
    data: Record<string, string>;
  };
  const rootsPem = roots.data['ca.crt'];
  for (const podFile of (await readdir(projectPath('examples/pods'))).sort()) {
    const pod = (await yamlDocuments(projectPath('examples/pods', podFile)))[0] as {
      metadata: { name: string; namespace: string };
      spec: { volumes: Yaml[] };
    };
    const { metadata } = pod;
    const volumes = pod.spec.volumes;
    for (const volume of volumes) {
      const csi = volume.csi as { volumeAttributes: Record<string, string> } | undefined;
      if (csi) {
        const target = join(dir, `${metadata.name}-${volume.name}`);
        const published = await runCli([
          'publish',
          ...['--endpoint', `unix://${join(dir, '.cert-csi', 'csi.sock')}`],
          ...['--volume-id', `csi-${metadata.name}`, '--target', target],
          ...['--pod-name', metadata.name, '--pod-namespace', metadata.namespace],
          ...Object.entries(csi.volumeAttributes).flatMap(([k, v]) => ['--attr', `${k}=${v}`]),
        ]);
        t.equal(published.code, 0, `examples/pods/${podFile}: the volume is published`, {
          stderr: published.stderr,
        });
        const leaf = new X509Certificate(await readFile(join(target, 'tls.crt')));
        t.ok(leaf.verify(ca.publicKey), `examples/pods/${podFile}: signed by example-ca`);
        t.match(leaf.subject, `CN=${metadata.name}.${metadata.namespace}`, 'its variables expand');
        const caFile = await readFile(join(target, 'ca.crt'), 'utf8');
        if (csi.volumeAttributes['csi.cert-manager.io/trust-bundle']) {
          t.equal(caFile, rootsPem, `examples/pods/${podFile}: ca.crt is the ConfigMap's roots`);
        } else {
          t.equal(
            new X509Certificate(caFile).fingerprint256,
            ca.fingerprint256,
            'ca.crt is the CA',
          );
        }
      }
      const sources = (volume.projected as { sources: Yaml[] } | undefined)?.sources ?? [];
      const podCertificate = sources.find((s) => s.podCertificate)?.podCertificate as
        | { signerName: string }
        | undefined;
      const bundle = sources.find((s) => s.clusterTrustBundle)?.clusterTrustBundle as
        | { signerName: string; labelSelector: { matchLabels: Record<string, string> } }
        | undefined;
      if (!podCertificate || !bundle) continue;
      t.equal(
        podCertificate.signerName,
        `issuers.cert-manager.io/${metadata.namespace}.example-ca`,
        `examples/pods/${podFile}: the signer is the CA Issuer of its namespace`,
      );
      // The bundle the projection selects is the one the plugin published for that signer.
      const published = await until(
        () =>
          stored(
            state,
            'certificates.k8s.io',
            'clustertrustbundles',
            '_cluster',
            `${bundle.signerName.replace('/', ':')}:primary.json`,
          ),
        { what: 'the ClusterTrustBundle of example-ca', timeoutMs: 60_000, intervalMs: 100 },
      );
      const meta = published.metadata as { labels?: Record<string, string> };
      const spec = published.spec as { signerName: string; trustBundle: string };
      t.equal(spec.signerName, bundle.signerName, 'the bundle is linked to the signer');
      for (const [key, value] of Object.entries(bundle.labelSelector.matchLabels)) {
        t.equal(meta.labels?.[key], value, `its label ${key} is selected`);
      }
      t.equal(
        new X509Certificate(spec.trustBundle).fingerprint256,
        ca.fingerprint256,
        'it holds the CA',
      );
    }
  }
});
