import t from 'tap';
import type { KubeObject } from '../../src/api/meta.js';
import { StoreError } from '../../src/store/errors.js';
import { escapeFieldValue, parseFieldSelector } from '../../src/store/field-selector.js';

const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'a,b', namespace: 'n' },
  spec: { count: 2, hostNetwork: true, nodeName: null, signerName: 'example.com/x=y' },
} as unknown as KubeObject;

/** The error parse throws for text (undefined when it parses). */
function parseError(text: string, labels?: readonly string[]): unknown {
  try {
    parseFieldSelector(text, labels);
  } catch (err) {
    return err;
  }
  return undefined;
}

t.test('terms: =, == and != on dotted paths; every term must hold', async (t) => {
  const matches = (text: string) => parseFieldSelector(text).matches(pod);
  t.equal(matches('metadata.namespace=n'), true);
  t.equal(matches('metadata.namespace==n'), true, '== is =');
  t.equal(matches('metadata.namespace!=n'), false);
  t.equal(matches('metadata.namespace!=m'), true);
  t.equal(matches('metadata.namespace=n,spec.count=3'), false, 'AND');
  t.equal(matches('metadata.namespace=n,spec.count!=3'), true);
  t.equal(matches(''), true, 'the empty selector selects everything');
  t.same(parseFieldSelector('a==b').requirements, [{ field: 'a', equals: true, value: 'b' }]);
  t.same(parseFieldSelector('a!=b').requirements, [{ field: 'a', equals: false, value: 'b' }]);
  t.equal(parseFieldSelector('spec.count=2,,').requirements.length, 1, 'empty terms skipped');
});

t.test('values: numbers and booleans compare as text, missing and null as empty', async (t) => {
  const matches = (text: string) => parseFieldSelector(text).matches(pod);
  t.equal(matches('spec.count=2'), true);
  t.equal(matches('spec.hostNetwork=true'), true);
  t.equal(matches('spec.missing='), true, 'a missing field is the empty string');
  t.equal(matches('spec.missing!='), false);
  t.equal(matches('spec.nodeName='), true, 'null is the empty string (an unscheduled pod)');
  t.equal(matches('spec.count.deeper='), true, 'a path through a non-object finds nothing');
  t.equal(matches('nothing.at.all='), true);
  t.equal(matches('metadata.constructor='), true, 'inherited properties are not fields');
  t.equal(matches('metadata.name=a\\,b'), true, 'an escaped comma');
  t.equal(matches('spec.signerName=example.com/x\\=y'), true, 'an escaped equals sign');
  t.same(parseFieldSelector('x=a\\\\b').requirements[0]?.value, 'a\\b', 'an escaped backslash');
});

t.test('an escaped value reads back as itself, whatever it holds', async (t) => {
  const cases: Array<[value: string, escaped: string]> = [
    ['node-1', 'node-1'],
    ['a,b', 'a\\,b'],
    ['example.com/x=y', 'example.com/x\\=y'],
    ['a\\b', 'a\\\\b'],
    ['\\,=', '\\\\\\,\\='],
    ['', ''],
  ];
  for (const [value, escaped] of cases) {
    t.equal(escapeFieldValue(value), escaped, `escaped: ${value}`);
    const read = parseFieldSelector(`spec.x=${escapeFieldValue(value)},spec.y=1`);
    t.same(
      read.requirements.map((r) => r.value),
      [value, '1'],
      `${JSON.stringify(value)} is one value of one term`,
    );
  }
});

t.test('the first operator wins; an escaped character is never part of one', async (t) => {
  t.same(parseFieldSelector('spec.x!y=1').requirements, [
    { field: 'spec.x!y', equals: true, value: '1' },
  ]);
  t.same(parseFieldSelector('a!=b').requirements[0]?.field, 'a', '!= before =');
  t.same(
    parseFieldSelector('metadata\\=x=1').requirements[0]?.field,
    'metadata\\=x',
    'the field keeps its escapes (upstream unescapes values only)',
  );
  t.same(parseFieldSelector('a\\,b=1').requirements[0]?.field, 'a\\,b');
});

t.test('exactName: the name a metadata.name= term pins', async (t) => {
  t.equal(parseFieldSelector('metadata.name=a\\,b').exactName(), 'a,b');
  t.equal(parseFieldSelector('metadata.namespace=n,metadata.name==x').exactName(), 'x');
  t.equal(parseFieldSelector('metadata.name!=a').exactName(), undefined);
  t.equal(parseFieldSelector('spec.nodeName=a').exactName(), undefined);
});

t.test('supported labels: any other is refused; without a list any path goes', async (t) => {
  const labels = ['metadata.name', 'spec.signerName'];
  t.equal(parseFieldSelector('spec.signerName=x,metadata.name=y', labels).requirements.length, 2);
  t.match(parseError('spec.nodeName=x', labels), {
    name: 'StoreError',
    reason: 'BadRequest',
    code: 400,
    message: 'field label not supported: spec.nodeName',
  });
  t.match(parseError('metadata\\=x=1', labels), { message: /not supported: metadata\\=x/ });
  t.equal(parseError('spec.nodeName=x'), undefined, 'no list: not refused');
  t.equal(parseError('', []), undefined, 'an empty selector needs no label');
});

t.test('malformed selectors are BadRequest with upstream messages', async (t) => {
  const cases: Array<[string, RegExp | string]> = [
    ['=x', "invalid selector: '=x'; can't understand '=x'"],
    ['metadata.name', "invalid selector: 'metadata.name'; can't understand 'metadata.name'"],
    ['a=1,b', "invalid selector: 'a=1,b'; can't understand 'b'"],
    ['metadata.name,a=b', /can't understand 'metadata.name'/],
    ['metadata.name=a\\b', "invalid field selector: 'metadata.name=a\\b': invalid escape sequence"],
    ['metadata.name=a\\', /invalid escape sequence/],
    ['metadata.name=a=b', "invalid field selector: 'metadata.name=a=b': unescaped = in value"],
    ['a!=b=c', /unescaped = in value/],
    ['a=!=b', /unescaped = in value/],
  ];
  for (const [text, message] of cases) {
    const err = parseError(text);
    t.ok(err instanceof StoreError, `${text}: a StoreError`);
    t.match(err, { reason: 'BadRequest', code: 400 }, `${text}: BadRequest (400)`);
    if (typeof message === 'string') t.equal((err as Error).message, message, text);
    else t.match((err as Error).message, message, text);
  }
});
