import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { status } from '@grpc/grpc-js';
import t from 'tap';
import { ObjectShapeError } from '../../src/admission/object-shape.js';
import { MissingObjectError } from '../../src/admission/webhook/cert-manager-admission.js';
import { HttpRefusal } from '../../src/admission/webhook/review-body.js';
import { MalformedReviewError } from '../../src/api/admission-review.js';
import { CsvParseError } from '../../src/attributes/list-splitting.js';
import { DeadlineExceededError } from '../../src/base/deadline.js';
import {
  type ErrorKind,
  errorCatalogue,
  errorSpecOf,
  type KindedError,
  kindOf,
} from '../../src/base/error-catalogue.js';
import { CertificateNotFoundError } from '../../src/certificates/manual-trigger.js';
import { DuplicateRequestsError } from '../../src/certificates/request-gatherer.js';
import { PluginCallError } from '../../src/cli/common/plugin-call-error.js';
import { UsageError } from '../../src/cli/common/usage-error.js';
import { ManifestError } from '../../src/cli/node/load-manifests.js';
import { invalidArgument } from '../../src/driver/csi-error.js';
import { LockHeldError } from '../../src/fs/directory-lock.js';
import { FsError } from '../../src/fs/errors.js';
import { RefusedFileError } from '../../src/fs/regular-file.js';
import { EmbeddedCaLostError } from '../../src/issuer/ca-guard.js';
import { IssuerNotReadyError } from '../../src/issuer/issuers-controller.js';
import { CsrSignatureError } from '../../src/pki/csr.js';
import { PkiError } from '../../src/pki/errors.js';
import { PodKeyError } from '../../src/pki/pod-certificate-key.js';
import { StoreError } from '../../src/store/errors.js';
import { TargetPathError, VolumeError } from '../../src/volume/errors.js';
import { ControlError } from '../../src/volume-manager/control/control-client.js';
import { LineTooLongError } from '../../src/volume-manager/control/line-buffer.js';
import { IssuanceError } from '../../src/volume-manager/issuance/issuance-error.js';
import { RequestWaitError } from '../../src/volume-manager/issuance/request-tracker.js';
import { RepublishConflictError } from '../../src/volume-manager/policy/republish-check.js';
import { ReloadRefusedError } from '../../src/volume-manager/reload/volume-reloader.js';
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

// Each error class of src/ and the kind it answers the edges with.
const errorClasses: [string, unknown, ErrorKind][] = [
  ['MalformedReviewError', new MalformedReviewError('m'), 'CERT_CSI_REVIEW_MALFORMED'],
  ['DeadlineExceededError', new DeadlineExceededError(5), 'CERT_CSI_DEADLINE_EXCEEDED'],
  ['PkiError', new PkiError('m'), 'CERT_CSI_PKI_FAILED'],
  ['CsrSignatureError', new CsrSignatureError('m', 'r'), 'CERT_CSI_CSR_SIGNATURE_INVALID'],
  ['PodKeyError', new PodKeyError('missing', 'm'), 'CERT_CSI_POD_KEY_UNUSABLE'],
  ['FsError', new FsError('m'), 'CERT_CSI_FILE_OPERATION_FAILED'],
  ['RefusedFileError', new RefusedFileError('/f', 'is a FIFO'), 'CERT_CSI_FILE_REFUSED'],
  ['LockHeldError', new LockHeldError('/l', 1, 'dir'), 'CERT_CSI_LOCK_HELD'],
  ['StoreError', new StoreError('NotFound', 'm'), 'CERT_CSI_API_REQUEST_FAILED'],
  ['EmbeddedCaLostError', new EmbeddedCaLostError('m'), 'CERT_CSI_EMBEDDED_CA_LOST'],
  ['IssuerNotReadyError', new IssuerNotReadyError('m'), 'CERT_CSI_ISSUER_NOT_READY'],
  [
    'CertificateNotFoundError',
    new CertificateNotFoundError({ namespace: 'n', name: 'c' }),
    'CERT_CSI_CERTIFICATE_NOT_FOUND',
  ],
  ['DuplicateRequestsError', new DuplicateRequestsError('next', 2), 'CERT_CSI_DUPLICATE_REQUESTS'],
  ['ObjectShapeError', new ObjectShapeError('m'), 'CERT_CSI_OBJECT_FIELD_WRONG_TYPE'],
  ['MissingObjectError', new MissingObjectError('m'), 'CERT_CSI_REVIEW_OBJECT_MISSING'],
  ['HttpRefusal', new HttpRefusal('CERT_CSI_WEBHOOK_BUSY', 'm'), 'CERT_CSI_WEBHOOK_BUSY'],
  ['CsvParseError', new CsvParseError(1, 1, 2, 'bare "'), 'CERT_CSI_CSV_MALFORMED'],
  ['VolumeError', new VolumeError('m'), 'CERT_CSI_VOLUME_FAILED'],
  ['ControlError', new ControlError('no-plugin', 'm', '/s'), 'CERT_CSI_PLUGIN_CALL_FAILED'],
  ['LineTooLongError', new LineTooLongError(4096), 'CERT_CSI_CONTROL_LINE_TOO_LONG'],
  ['TargetPathError', new TargetPathError('m'), 'CERT_CSI_TARGET_PATH_REFUSED'],
  ['RequestWaitError', new RequestWaitError('m', 'deleted'), 'CERT_CSI_REQUEST_WAIT_ENDED'],
  [
    'RepublishConflictError',
    new RepublishConflictError('csi-x', ['readOnly']),
    'CERT_CSI_REPUBLISH_CONFLICT',
  ],
  ['IssuanceError denied', new IssuanceError('m', 'denied'), 'CERT_CSI_ISSUANCE_DENIED'],
  ['IssuanceError failed', new IssuanceError('m', 'failed'), 'CERT_CSI_ISSUANCE_FAILED'],
  ['IssuanceError timeout', new IssuanceError('m', 'timeout'), 'CERT_CSI_ISSUANCE_TIMED_OUT'],
  ['IssuanceError aborted', new IssuanceError('m', 'aborted'), 'CERT_CSI_ISSUANCE_ABORTED'],
  [
    'IssuanceError invalid-certificate',
    new IssuanceError('m', 'invalid-certificate'),
    'CERT_CSI_ISSUED_CERTIFICATE_INVALID',
  ],
  ['ReloadRefusedError', new ReloadRefusedError('m'), 'CERT_CSI_RELOAD_REFUSED'],
  ['CsiError', invalidArgument('m'), 'CERT_CSI_INVALID_CSI_REQUEST'],
  ['ManifestError', new ManifestError('f', 'm'), 'CERT_CSI_MANIFEST_INVALID'],
  ['UsageError', new UsageError('m'), 'CERT_CSI_INVALID_COMMAND_LINE'],
  ['PluginCallError', new PluginCallError('m'), 'CERT_CSI_PLUGIN_CALL_FAILED'],
];

t.test('each error class answers the edges with the kind of what went wrong', async (t) => {
  for (const [what, err, kind] of errorClasses) {
    t.ok(err instanceof Error, `${what} is an Error`);
    t.equal(kindOf(err), kind, what);
  }
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
