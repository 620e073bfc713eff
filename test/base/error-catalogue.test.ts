import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { status } from '@grpc/grpc-js';
import t from 'tap';
import { MalformedReviewError } from '../../src/api/admission-review.js';
import {
  type ErrorKind,
  errorCatalogue,
  errorSpecOf,
  type KindedError,
  kindOf,
} from '../../src/base/error-catalogue.js';
import { projectPath } from '../support/project-files.js';

const kinds = Object.keys(errorCatalogue) as ErrorKind[];

t.test('every kind has a code, a gRPC status, an HTTP status and an exit code', async (t) => {
  t.ok(kinds.length > 20, 'the catalogue was read');
  for (const kind of kinds) {
    const spec = errorCatalogue[kind];
    t.match(kind, /^CERT_CSI_[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$/, `${kind}: a code of its own prefix`);
    t.type(status[spec.grpcStatus], 'number', `${kind}: ${spec.grpcStatus} is a gRPC status`);
    t.not(status[spec.grpcStatus], status.OK, `${kind}: an error is never OK`);
    t.ok(
      Number.isInteger(spec.httpStatus) && spec.httpStatus >= 400 && spec.httpStatus <= 599,
      `${kind}: HTTP ${spec.httpStatus} is an error status`,
    );
    // 0 is success; 126 and above are the shell's (not executable, not found, signals).
    t.ok(
      Number.isInteger(spec.exitCode) && spec.exitCode >= 1 && spec.exitCode <= 125,
      `${kind}: exit ${spec.exitCode} is a failure status`,
    );
    t.ok(spec.summary.length > 0 && spec.summary.length <= 100, `${kind}: a short summary`);
  }
});

t.test('no two kinds say the same thing', async (t) => {
  // The codes are the keys of one object (tsc refuses a repeated key); two entries may still
  // describe one failure under two names.
  const summaries = kinds.map((kind) => errorCatalogue[kind].summary);
  t.equal(new Set(summaries).size, summaries.length);
});

t.test('kindOf reads a declared kind and nothing else', async (t) => {
  const kinded = { errorKind: 'CERT_CSI_LOCK_HELD' };
  t.equal(kindOf(kinded), 'CERT_CSI_LOCK_HELD');
  t.equal(kindOf(new MalformedReviewError('x')), 'CERT_CSI_REVIEW_MALFORMED');
  const cases: [string, unknown][] = [
    ['an Error of no kind', new Error('x')],
    ['an unknown code', { errorKind: 'CERT_CSI_NO_SUCH_KIND' }],
    ['a property every object inherits', { errorKind: 'toString' }],
    ['a code that is not a string', { errorKind: 42 }],
    ['a string', 'CERT_CSI_LOCK_HELD'],
    ['null', null],
    ['undefined', undefined],
  ];
  for (const [what, value] of cases) t.equal(kindOf(value), undefined, what);
});

t.test('errorSpecOf answers an error of no kind as an internal error', async (t) => {
  t.equal(errorSpecOf({ errorKind: 'CERT_CSI_LOCK_HELD' }), errorCatalogue.CERT_CSI_LOCK_HELD);
  t.equal(errorSpecOf(new Error('x')), errorCatalogue.CERT_CSI_INTERNAL_ERROR);
  t.equal(errorSpecOf('thrown text'), errorCatalogue.CERT_CSI_INTERNAL_ERROR);
  t.match(errorCatalogue.CERT_CSI_INTERNAL_ERROR, {
    grpcStatus: 'INTERNAL',
    httpStatus: 500,
    exitCode: 1,
  });
});

t.test('an api error declares a kind without importing the catalogue', async (t) => {
  // api is the layer above base: its kind is a string literal, which must be a catalogue code.
  const declared: KindedError = new MalformedReviewError('x');
  t.equal(declared.errorKind, 'CERT_CSI_REVIEW_MALFORMED');
});

/** A class declared in a source file, with the text between its braces. */
interface ClassDeclaration {
  file: string;
  name: string;
  parent: string;
  body: string;
}

/** Every `class X extends Y {...}` of the sources (top-level and nested alike). */
function classDeclarations(sources: ReadonlyMap<string, string>): ClassDeclaration[] {
  const found: ClassDeclaration[] = [];
  for (const [file, text] of sources) {
    for (const match of text.matchAll(/\bclass\s+(\w+)\s+extends\s+(\w+)[^{]*\{/g)) {
      let depth = 1;
      let end = (match.index ?? 0) + match[0].length;
      const start = end;
      while (depth > 0 && end < text.length) {
        if (text[end] === '{') depth++;
        else if (text[end] === '}') depth--;
        end++;
      }
      found.push({
        file,
        name: match[1] ?? '',
        parent: match[2] ?? '',
        body: text.slice(start, end - 1),
      });
    }
  }
  return found;
}

/**
 * The error classes of the sources (those extending Error, a built-in error, or one of them)
 * whose body does not declare `errorKind`.
 */
function errorClassesWithoutKind(sources: ReadonlyMap<string, string>): string[] {
  const classes = classDeclarations(sources);
  const errorClasses = new Set<string>();
  let grew = true;
  while (grew) {
    grew = false;
    for (const c of classes) {
      const isError = /^(\w*Error|Error)$/.test(c.parent) || errorClasses.has(c.parent);
      if (isError && !errorClasses.has(c.name)) {
        errorClasses.add(c.name);
        grew = true;
      }
    }
  }
  return classes
    .filter((c) => errorClasses.has(c.name) && !/\berrorKind\b/.test(c.body))
    .map((c) => `${c.file}: ${c.name}`);
}

async function sourceTexts(): Promise<Map<string, string>> {
  const root = projectPath('src');
  const entries = await readdir(root, { withFileTypes: true, recursive: true });
  const texts = new Map<string, string>();
  for (const e of entries) {
    if (!e.isFile() || !e.name.endsWith('.ts')) continue;
    const path = join(e.parentPath, e.name);
    texts.set(relative(root, path), await readFile(path, 'utf8'));
  }
  return texts;
}

t.test(
  'the scan finds an error class without a kind, directly or through its parent',
  async (t) => {
    const sources = new Map([
      [
        'a.ts',
        [
          "class Kinded extends Error {\n  get errorKind() { return 'CERT_CSI_LOCK_HELD'; }\n}",
          'class Plain extends Error {\n  constructor() { super(`${1}`); }\n}',
          'class Child extends Kinded {}',
          'class NotAnError extends Map {}',
        ].join('\n'),
      ],
      ['b.ts', 'export class Refusal extends TypeError {}\nclass Grandchild extends Plain {}'],
    ]);
    t.same(errorClassesWithoutKind(sources), [
      'a.ts: Plain',
      'a.ts: Child',
      'b.ts: Refusal',
      'b.ts: Grandchild',
    ]);
  },
);

t.test('every error class of src/ declares its kind', async (t) => {
  const sources = await sourceTexts();
  const classes = classDeclarations(sources);
  t.ok(classes.length > 20, 'classes were found');
  t.same(errorClassesWithoutKind(sources), []);
});

t.test('every code named in src/ is in the catalogue, and every kind is raised', async (t) => {
  const sources = await sourceTexts();
  const named = new Set<string>();
  for (const [file, text] of sources) {
    if (file === join('base', 'error-catalogue.ts')) continue;
    for (const match of text.matchAll(/'(CERT_CSI_[A-Z0-9_]+)'/g)) named.add(match[1] ?? '');
  }
  const catalogued = new Set<string>(kinds);
  t.same(
    [...named].filter((code) => !catalogued.has(code)),
    [],
    'no code outside the catalogue (api names its kind as a plain string)',
  );
  // The internal error is the kind of everything that declares none.
  t.same(
    kinds.filter((kind) => kind !== 'CERT_CSI_INTERNAL_ERROR' && !named.has(kind)),
    [],
    'no kind that nothing raises',
  );
});
