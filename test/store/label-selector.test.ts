import t from 'tap';
import { isStoreError } from '../../src/store/errors.js';
import { parseLabelSelector } from '../../src/store/label-selector.js';

const labels = { app: 'web', tier: 'front', 'example.com/team': 'a', count: '7', empty: '' };

t.test('empty and whitespace selectors match everything', async (t) => {
  for (const text of ['', '   ']) {
    const selector = parseLabelSelector(text);
    t.same(selector.requirements, []);
    t.ok(selector.matches(undefined));
    t.ok(selector.matches(labels));
  }
});

t.test('equality operators', async (t) => {
  t.ok(parseLabelSelector('app=web').matches(labels));
  t.ok(parseLabelSelector('app==web').matches(labels));
  t.notOk(parseLabelSelector('app=db').matches(labels));
  t.notOk(parseLabelSelector('app=web').matches(undefined));
  t.ok(parseLabelSelector('app!=db').matches(labels));
  t.notOk(parseLabelSelector('app!=web').matches(labels));
  t.ok(parseLabelSelector('missing!=x').matches(labels), '!= matches when the label is absent');
  t.ok(parseLabelSelector('empty=').matches(labels), 'a=  selects the empty value');
  t.ok(parseLabelSelector('empty=,app=web').matches(labels));
  t.notOk(parseLabelSelector('app=').matches(labels));
  t.ok(parseLabelSelector('example.com/team=a').matches(labels), 'prefixed keys');
  t.same(parseLabelSelector('a==b').requirements, [
    { key: 'a', operator: 'equals', values: ['b'] },
  ]);
});

t.test('set operators', async (t) => {
  t.ok(parseLabelSelector('app in (web,db)').matches(labels));
  t.ok(parseLabelSelector('app in(db, web )').matches(labels));
  t.notOk(parseLabelSelector('app in (db)').matches(labels));
  t.notOk(parseLabelSelector('missing in (db)').matches(labels));
  t.ok(parseLabelSelector('app notin (db)').matches(labels));
  t.notOk(parseLabelSelector('app notin (db,web)').matches(labels));
  t.ok(parseLabelSelector('missing notin (db)').matches(labels));
  t.same(parseLabelSelector('a in ()').requirements[0]?.values, [''], '() holds the empty value');
  t.same(parseLabelSelector('a in (x,,y)').requirements[0]?.values, ['x', '', 'y']);
  t.same(parseLabelSelector('a in (x,)').requirements[0]?.values, ['x', '']);
  t.ok(parseLabelSelector('empty in ()').matches(labels));
});

t.test('existence', async (t) => {
  t.ok(parseLabelSelector('app').matches(labels));
  t.ok(parseLabelSelector('app,tier').matches(labels));
  t.notOk(parseLabelSelector('missing').matches(labels));
  t.ok(parseLabelSelector('!missing').matches(labels));
  t.ok(parseLabelSelector('! missing').matches(undefined));
  t.notOk(parseLabelSelector('!app').matches(labels));
  t.notOk(parseLabelSelector('toString').matches(labels), 'inherited properties are not labels');
});

t.test('numeric comparisons', async (t) => {
  t.ok(parseLabelSelector('count>5').matches(labels));
  t.notOk(parseLabelSelector('count>7').matches(labels));
  t.ok(parseLabelSelector('count<8').matches(labels));
  t.notOk(parseLabelSelector('count<-1').matches(labels));
  t.notOk(parseLabelSelector('app>1').matches(labels), 'a non-integer label never compares');
  t.notOk(parseLabelSelector('missing<1').matches(labels));
});

t.test('comma means AND, whitespace is tolerated', async (t) => {
  const selector = parseLabelSelector(
    '  app = web ,tier in ( front , back ),  !missing , example.com/team ',
  );
  t.equal(selector.requirements.length, 4);
  t.ok(selector.matches(labels));
  t.notOk(selector.matches({ ...labels, tier: 'middle' }));
  t.notOk(parseLabelSelector('app=web,tier=back').matches(labels));
});

t.test('invalid selectors are BadRequest errors naming the bad part', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['app=web,', /found the end of the selector at position 8, expected a label key/],
    [',app', /found "," at position 0, expected a label key/],
    ['app in web', /found "web" at position 7, expected '\('/],
    ['app in (web', /found the end of the selector .* expected ',' or '\)'/],
    ['app in (web db)', /found "db" at position 12, expected ',' or '\)'/],
    ['app in (=)', /found "=" .* expected a label value, ',' or '\)'/],
    ['app web', /found "web" at position 4, expected an operator/],
    ['app = (x)', /found "\(" at position 6, expected a label value/],
    ['app ( x', /expected an operator .* after key "app"/],
    ['!app=web', /found "=" at position 4, expected ',' or the end/],
    ['in=x', /found "in" at position 0, expected a label key/],
    ['count>x', /found "x" at position 6, expected an integer after '>'/],
    ['count<', /found the end of the selector .* expected an integer after '<'/],
    ['Bad_Prefix.com/app=x', /label key "Bad_Prefix.com\/app" at position 0: the prefix/],
    ['-app=x', /label key "-app" at position 0: the name/],
    [`${'k'.repeat(64)}=x`, /the name must be 1-63 characters/],
    ['app=-web', /label value "-web" at position 4/],
    [`app in (${'v'.repeat(64)})`, /label value "v{64}" at position 8/],
  ];
  for (const [text, message] of cases) {
    let error: unknown;
    try {
      parseLabelSelector(text);
    } catch (err) {
      error = err;
    }
    t.ok(isStoreError(error, 'BadRequest'), `${text}: BadRequest`);
    t.equal((error as { code?: number }).code, 400, `${text}: HTTP 400`);
    t.match((error as Error).message, message, text);
    t.match((error as Error).message, `invalid label selector "${text}"`);
  }
});
