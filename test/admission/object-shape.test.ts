import t from 'tap';
import {
  aBoolean,
  anInteger,
  aString,
  listOf,
  mapOf,
  ObjectShapeError,
  objectOf,
} from '../../src/admission/object-shape.js';

const strings = listOf(aString, 'a list of strings');
const shape = objectOf({
  name: aString,
  on: aBoolean,
  size: anInteger,
  names: strings,
  labels: mapOf(aString, 'an object of strings'),
  items: listOf(objectOf({ type: aString }), 'a list of objects'),
  nested: objectOf({ deeper: objectOf({ value: aString }) }),
});

t.test('the first field of a wrong type is named, with what it must be', async (t) => {
  const cases: Array<[string, unknown, string]> = [
    ['not an object', 'spec', 'spec must be an object, got a string'],
    ['a list for an object', [], 'spec must be an object, got a list'],
    ['null for an object', null, 'spec must be an object, got null'],
    ['a number for a string', { name: 5 }, 'spec.name must be a string, got a number'],
    ['a string for a boolean', { on: 'yes' }, 'spec.on must be a boolean, got a string'],
    ['a fraction for an integer', { size: 1.5 }, 'spec.size must be a whole number, got a number'],
    ['a string for a list', { names: 'a,b' }, 'spec.names must be a list of strings, got a string'],
    ['an element', { names: ['a', 2] }, 'spec.names[1] must be a string, got a number'],
    ['a null element', { names: [null] }, 'spec.names[0] must be a string, got null'],
    [
      'a map value',
      { labels: { ok: 'x', bad: {} } },
      'spec.labels["bad"] must be a string, got an object',
    ],
    ['a list for a map', { labels: ['x'] }, 'spec.labels must be an object of strings, got a list'],
    [
      'an object in a list',
      { items: [{ type: 'DER' }, { type: true }] },
      'spec.items[1].type must be a string, got a boolean',
    ],
    [
      'deep down',
      { nested: { deeper: { value: [] } } },
      'spec.nested.deeper.value must be a string, got a list',
    ],
    [
      'a long map key is shortened in the path',
      { labels: { ['k'.repeat(300)]: 1 } },
      `spec.labels["${'k'.repeat(100)}"…(300 characters)] must be a string, got a number`,
    ],
  ];
  for (const [what, value, message] of cases) {
    t.throws(() => shape(value, 'spec'), new ObjectShapeError(message), what);
  }
});

t.test('a value of the right types is returned as it is, unknown fields untouched', async (t) => {
  const value = {
    name: 'web',
    on: true,
    size: 256,
    names: ['a', 'b'],
    labels: { a: 'b' },
    items: [{ type: 'DER', extra: 1 }],
    nested: { deeper: {} },
    unknown: { anything: [1, null] },
  };
  t.equal(shape(value, 'spec'), value, 'the same object: nothing copied');
  t.same(shape({}, 'spec'), {});
  t.same(shape({ name: undefined }, 'spec'), { name: undefined }, 'an undefined member is absent');
});

t.test('a null member is dropped, as Go decodes it: a copy, the input unchanged', async (t) => {
  const input = { name: null, names: ['a'], items: [{ type: null }], nested: { deeper: null } };
  const read = shape(input, 'spec');
  t.same(read, { names: ['a'], items: [{}], nested: {} });
  t.equal((read as { names: unknown }).names, input.names, 'unchanged parts are shared');
  t.same(input, { name: null, names: ['a'], items: [{ type: null }], nested: { deeper: null } });
});

t.test('a map of objects with null members: those members dropped, in a copy', async (t) => {
  const byName = mapOf(objectOf({ key: aString }), 'an object of objects');
  const input = { a: { key: 'x' }, b: { key: null, other: 1 } };
  t.same(byName(input, 'spec.refs'), { a: { key: 'x' }, b: { other: 1 } });
  t.same(input.b, { key: null, other: 1 }, 'the input unchanged');
  const clean = { a: { key: 'x' } };
  t.equal(byName(clean, 'spec.refs'), clean, 'nothing to drop: the same object');
});
