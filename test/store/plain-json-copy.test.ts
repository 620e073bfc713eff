import t from 'tap';
import { NEEDS_JSON, plainJsonCopy } from '../../src/store/plain-json-copy.js';

const nothingShared = () => false;
/** What JSON gives for value as a member of an object (undefined when it is dropped). */
const viaJson = (value: unknown): unknown =>
  (JSON.parse(JSON.stringify({ member: value })) as { member?: unknown }).member;

t.test('plain values copy exactly as a JSON round trip', async (t) => {
  const holes: unknown[] = [undefined, () => 1, Symbol('x')];
  holes[4] = 2;
  const cases: Array<[string, unknown]> = [
    ['string', 'PEM text'],
    ['true', true],
    ['number', 1.5],
    ['minus zero', -0],
    ['NaN', Number.NaN],
    ['infinity', Number.POSITIVE_INFINITY],
    ['null', null],
    ['undefined', undefined],
    ['function', () => 1],
    ['symbol', Symbol('s')],
    ['empty object', {}],
    ['empty array', []],
    ['nested', { a: [1, { b: 'c', d: undefined, e: null }], f: { g: [[]] } }],
    ['array holes and dropped values', holes],
    ['conditions', [{ type: 'Ready', status: 'True', reason: 'Issued', observedGeneration: 1 }]],
    ['null prototype', Object.assign(Object.create(null), { a: 1, b: undefined })],
    ['key order kept', { z: 1, a: 2, 10: 3, 2: 4 }],
  ];
  for (const [name, value] of cases) {
    const copy = plainJsonCopy(value, nothingShared);
    t.same(copy, viaJson(value), name);
    t.equal(JSON.stringify(copy), JSON.stringify(viaJson(value)), `${name}: same text`);
    if (typeof value === 'object' && value !== null) t.not(copy, value, `${name}: a copy`);
  }
  t.ok(Object.is(plainJsonCopy(-0, nothingShared), 0), 'minus zero becomes zero');
});

t.test('values only JSON should judge are left to it', async (t) => {
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  const proto = JSON.parse('{"__proto__": {"polluted": true}}') as unknown;
  const cases: Array<[string, unknown]> = [
    ['BigInt', 1n],
    ['nested BigInt', { a: [1n] }],
    ['Date', new Date(0)],
    ['toJSON', { toJSON: () => 'x' }],
    ['nested toJSON', [{ toJSON: () => 'x' }]],
    ['class instance', new (class Thing {})()],
    ['Map', new Map([[1, 2]])],
    ['Buffer', Buffer.from('ab')],
    ['cycle', cyclic],
    ['__proto__ key', proto],
    ['deep', JSON.parse(`${'['.repeat(100)}${']'.repeat(100)}`)],
  ];
  for (const [name, value] of cases) t.equal(plainJsonCopy(value, nothingShared), NEEDS_JSON, name);
});

t.test('shared objects are taken as they are', async (t) => {
  const stored = Object.freeze({ a: 1 });
  const copy = plainJsonCopy({ stored, other: { b: 2 } }, (v) => v === stored) as {
    stored: unknown;
    other: unknown;
  };
  t.equal(copy.stored, stored);
  t.same(copy.other, { b: 2 });
});
