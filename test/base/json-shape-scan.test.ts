import t from 'tap';
import { type JsonShapeLimits, JsonShapeScan } from '../../src/base/json-shape-scan.js';

const LIMITS: JsonShapeLimits = { maxDepth: 3, maxContainers: 5, maxEntries: 4 };

/** The scan's verdict on text fed in one chunk, and fed in pieces of every size up to 7 bytes. */
function verdicts(text: string, limits = LIMITS): Array<string | undefined> {
  const bytes = Buffer.from(text, 'utf8');
  const results: Array<string | undefined> = [];
  for (const size of [bytes.length, 1, 2, 3, 5, 7]) {
    const scan = new JsonShapeScan(limits);
    let problem: string | undefined;
    for (let i = 0; i < bytes.length && problem === undefined; i += Math.max(size, 1)) {
      problem = scan.feed(bytes.subarray(i, i + Math.max(size, 1)));
    }
    results.push(problem);
  }
  return results;
}

t.test('the first limit passed is reported, however the text is cut in chunks', async (t) => {
  const deep = 'nests deeper than 3 levels';
  const containers = 'holds more than 5 objects and arrays';
  const entries = 'has an object or array of more than 4 entries';
  const cases: Array<[string, string, string | undefined]> = [
    ['a flat object', '{"a":1,"b":[1,2],"c":{"d":null}}', undefined],
    ['depth at the limit', '[[[1]]]', undefined],
    ['depth past it', '[[[[1]]]]', deep],
    ['objects count as arrays do', '{"a":{"b":{"c":{}}}}', deep],
    ['brackets in strings are text', '["[[[[", "{{{{", "]]]]"]', undefined],
    ['an escaped quote does not end a string', '["\\"[[[[[["]', undefined],
    ['an escaped backslash does: the brackets after it count', '["\\\\",[[[[1]]]]]', deep],
    ['a unicode escape is text', '["\\u005b[[["]', undefined],
    ['multi-byte characters are text', '["é[😀{", "日本"]', undefined],
    ['entries at the limit', '[1,2,3,4]', undefined],
    ['entries past it', '[1,2,3,4,5]', entries],
    ['members count as elements do', '{"a":1,"b":2,"c":3,"d":4,"e":5}', entries],
    ['commas in strings are text', '["a,b,c,d,e,f"]', undefined],
    ['each container counts its own entries', '[[1,2,3],[1,2,3],[1,2,3]]', undefined],
    ['containers at the limit', '[[],[],{},[]]', undefined],
    ['containers past it', '[[[]],[[]],[]]', containers],
    ['closed ones still count', '[[]],[[]],[[]]', containers],
    ['a close with nothing open is left to the parser', ']]]][[[1]]]', undefined],
    ['commas at the top level too', '1,2,3,4,5,6', undefined],
    ['not JSON at all, within the limits', 'hello', undefined],
  ];
  for (const [what, text, expected] of cases) {
    t.same(verdicts(text), Array(6).fill(expected), what);
  }
});

t.test('once a limit is passed, every later chunk gets the same answer at once', async (t) => {
  const scan = new JsonShapeScan(LIMITS);
  t.equal(scan.feed(Buffer.from('[[[[')), 'nests deeper than 3 levels');
  t.equal(scan.feed(Buffer.from('1]]]]')), 'nests deeper than 3 levels');
  t.equal(scan.feed(Buffer.from('')), 'nests deeper than 3 levels');
});

t.test('a body of megabytes is refused at its first bytes when it nests too deep', async (t) => {
  const scan = new JsonShapeScan({ maxDepth: 64, maxContainers: 50_000, maxEntries: 500_000 });
  const first = Buffer.from(`{"request":${'['.repeat(16 * 1024)}`);
  t.equal(scan.feed(first), 'nests deeper than 64 levels');
});
