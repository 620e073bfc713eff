import t from 'tap';
import {
  freezeJson,
  frozenJsonCopy,
  isFrozenJson,
  jsonEqual,
  toJsonCopy,
} from '../../src/store/json-value.js';
import { byNamespaceAndName } from '../../src/store/object-order.js';
import { isNewerResourceVersion, parseResourceVersion } from '../../src/store/resource-version.js';

t.test('jsonEqual compares JSON values deeply', async (t) => {
  t.ok(jsonEqual({ a: [1, { b: 'x' }], c: null }, { c: null, a: [1, { b: 'x' }] }));
  t.notOk(jsonEqual({ a: 1 }, { a: 2 }));
  t.notOk(jsonEqual({ a: 1 }, { b: 1 }));
  t.notOk(jsonEqual({ a: 1 }, { a: 1, b: 2 }));
  t.notOk(jsonEqual([1], [1, 2]));
  t.notOk(jsonEqual([1], { 0: 1 }), 'an array is not an object');
  t.notOk(jsonEqual(null, {}));
  t.notOk(jsonEqual('1', 1));
  t.ok(jsonEqual('x', 'x'));
});

t.test('toJsonCopy drops undefined and copies deeply', async (t) => {
  const source = { a: undefined, b: { c: [1] }, d: new Date(0) };
  const copy = toJsonCopy(source, 'thing');
  t.same(copy, { b: { c: [1] }, d: '1970-01-01T00:00:00.000Z' });
  t.not(copy.b, source.b);
  t.throws(() => toJsonCopy({ n: 1n }, 'thing'), {
    name: 'StoreError',
    message: /thing is not representable as JSON/,
  });
});

t.test('parseResourceVersion accepts decimals only', async (t) => {
  t.equal(parseResourceVersion('0'), 0);
  t.equal(parseResourceVersion('12345'), 12345);
  for (const bad of ['', '-1', '01', '1.5', 'abc', ' 1', '99999999999999999999']) {
    t.throws(
      () => parseResourceVersion(bad),
      { name: 'StoreError', reason: 'Invalid', message: /invalid resource version/ },
      bad,
    );
  }
});

t.test(
  'isNewerResourceVersion compares decimals numerically, anything else by difference',
  async (t) => {
    t.ok(isNewerResourceVersion('10', '9'));
    t.notOk(isNewerResourceVersion('9', '10'));
    t.notOk(isNewerResourceVersion('10', '10'));
    t.ok(isNewerResourceVersion('12', '11'));
    t.notOk(isNewerResourceVersion('11', '12'));
    t.ok(isNewerResourceVersion('opaque-b', 'opaque-a'));
    t.notOk(isNewerResourceVersion('opaque', 'opaque'));
    t.ok(isNewerResourceVersion('1', undefined));
    t.notOk(isNewerResourceVersion(undefined, undefined));
  },
);

const obj = (namespace: string | undefined, name: string) => ({
  apiVersion: 'v1',
  kind: 'Thing',
  metadata: { name, ...(namespace ? { namespace } : {}) },
});

t.test('objects sort by namespace, cluster-scoped first, then name', async (t) => {
  const sorted = [
    obj('b', 'a'),
    obj('a', 'b'),
    obj(undefined, 'z'),
    obj('a', 'a'),
    obj('a-b', 'a'),
    obj('a', 'a'),
  ]
    .sort(byNamespaceAndName)
    .map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`);
  t.same(sorted, ['/z', 'a/a', 'a/a', 'a/b', 'a-b/a', 'b/a']);
  t.equal(byNamespaceAndName(obj('x', 'b'), obj('x', 'a')), 1);
  t.equal(byNamespaceAndName(obj('y', 'a'), obj('x', 'a')), 1);
});

t.test('freezeJson: frozen all the way down, and shared by toJsonCopy', async (t) => {
  const stored = freezeJson({ metadata: { name: 'a', labels: { x: '1' } }, spec: { n: [1] } });
  t.ok(Object.isFrozen(stored.metadata.labels) && Object.isFrozen(stored.spec.n));
  t.ok(isFrozenJson(stored) && isFrozenJson(stored.spec), 'the value and its members');
  t.equal(toJsonCopy(stored, 'thing'), stored, 'a frozen JSON value is its own copy');
  const written = { ...stored, status: { when: new Date(0), gone: undefined } };
  const copy = toJsonCopy(written, 'thing');
  t.not(copy, written, 'the written object itself is copied');
  t.equal(copy.metadata, stored.metadata, 'its stored members are shared');
  t.equal(copy.spec, stored.spec);
  t.same(copy.status, { when: '1970-01-01T00:00:00.000Z' }, 'the rest travels as JSON');
  t.same(Object.keys(copy), ['metadata', 'spec', 'status'], 'in the same order');
  t.notOk(isFrozenJson({ ...stored }), 'a copy made elsewhere is not known');
  t.notOk(isFrozenJson(Object.freeze({ a: 1 })), 'nor is an object frozen by someone else');
});

t.test('toJsonCopy of an object holding stored members fails as before', async (t) => {
  const stored = freezeJson({ spec: { n: 1 } });
  const cyclic: Record<string, unknown> = { spec: stored.spec };
  cyclic.self = cyclic;
  t.throws(() => toJsonCopy(cyclic, 'thing'), {
    name: 'StoreError',
    reason: 'Invalid',
    message: /^thing is not representable as JSON: TypeError: Converting circular structure/,
  });
  t.throws(() => toJsonCopy({ spec: stored.spec, n: 1n }, 'thing'), {
    message: /thing is not representable as JSON: TypeError: Do not know how to serialize a BigInt/,
  });
  const proto = JSON.parse('{"__proto__": {"a": 1}, "spec": {}}') as Record<string, unknown>;
  const copied = toJsonCopy({ ...proto, spec: stored.spec }, 'thing');
  t.same(Object.getPrototypeOf(copied), Object.prototype, 'a __proto__ member stays a member');
  t.same(JSON.stringify(copied), '{"__proto__":{"a":1},"spec":{"n":1}}');
  const frozen = frozenJsonCopy({ a: { b: undefined, c: 1 } }, 'thing');
  t.ok(Object.isFrozen(frozen.a) && isFrozenJson(frozen));
  t.same(frozen, { a: { c: 1 } });
});
