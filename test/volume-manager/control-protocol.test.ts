import { EventEmitter } from 'node:events';
import t from 'tap';
import {
  ANSWER_TEXT_MAX_CHARS,
  type AnswerLine,
  formatAnswerLine,
  parseAnswerLine,
} from '../../src/volume-manager/control/control-answers.js';
import {
  type ControlRequest,
  formatControlRequest,
  parseControlRequest,
  type RenewOutcome,
} from '../../src/volume-manager/control/control-protocol.js';
import { LineBuffer, LineTooLongError } from '../../src/volume-manager/control/line-buffer.js';
import { type AnswerSink, RenewStream } from '../../src/volume-manager/control/renew-stream.js';

const NOT_AFTER = '2030-01-01T00:00:00.000Z';

t.test('every request goes through its line and back unchanged', async (t) => {
  const requests: ControlRequest[] = [
    { op: 'renew', target: { volumeId: 'csi-a' } },
    { op: 'renew', target: { all: true } },
    { op: 'renew-certificate', certificate: { namespace: 'sandbox', name: 'web' } },
    {
      op: 'decide-request',
      decision: {
        namespace: 'sandbox',
        name: 'web-1',
        decision: 'Denied',
        reason: 'pki-team',
        message: 'violates policy',
      },
    },
    { op: 'status' },
  ];
  for (const request of requests) {
    const line = formatControlRequest(request);
    t.match(line, /^\{.*\}\n$/, `${request.op}: one line`);
    t.same(parseControlRequest(line.trimEnd()), request, line.trimEnd());
  }
  t.same(
    parseControlRequest('{"op":"status","requestedAt":"x"}'),
    { op: 'status' },
    'a field this plugin does not know is ignored',
  );
});

t.test('a malformed request is refused, saying what is wrong', async (t) => {
  const cases: Array<[string, RegExp | string]> = [
    ['{"op": ', /^not JSON: /],
    ['[]', 'not a JSON object'],
    ['null', 'not a JSON object'],
    [
      '{}',
      'op missing or not a string: expected "renew", "renew-certificate", "decide-request" or "status"',
    ],
    [
      '{"op":1}',
      'op missing or not a string: expected "renew", "renew-certificate", "decide-request" or "status"',
    ],
    [
      `{"op":"${'x'.repeat(300)}"}`,
      `op "${'x'.repeat(100)}"…(300 characters): expected "renew", "renew-certificate", "decide-request" or "status"`,
    ],
    ['{"op":"renew"}', 'renew needs volumeId or "all": true'],
    ['{"op":"renew","all":false}', 'all must be true'],
    ['{"op":"renew","all":true,"volumeId":"csi-a"}', 'renew names both volumeId and all'],
    ['{"op":"renew","volumeId":7}', 'renew needs volumeId or "all": true'],
    ['{"op":"renew","volumeId":"../etc"}', /^invalid volume id "\.\.\/etc": /],
    ['{"op":"renew","volumeId":"..renew"}', /^invalid volume id "\.\.renew": /],
    [
      '{"op":"renew-certificate","namespace":"a"}',
      'renew-certificate needs a namespace and a name, both strings',
    ],
    [
      '{"op":"renew-certificate","namespace":"Sandbox","name":"web"}',
      /^certificate: namespace "Sandbox" is invalid/,
    ],
    [
      '{"op":"renew-certificate","namespace":"a","name":"../b"}',
      /^certificate: name "\.\.\/b" is invalid/,
    ],
    [
      '{"op":"decide-request","namespace":"a"}',
      'decide-request needs a namespace and a name, both strings',
    ],
    [
      '{"op":"decide-request","namespace":"a","name":"../b"}',
      /^request: name "\.\.\/b" is invalid/,
    ],
    [
      '{"op":"decide-request","namespace":"a","name":"b","decision":"Maybe"}',
      'decide-request: decision must be "Approved" or "Denied"',
    ],
    [
      '{"op":"decide-request","namespace":"a","name":"b","decision":"Approved","message":"m"}',
      'decide-request: reason must be a string of 1 to 1024 characters',
    ],
    [
      `{"op":"decide-request","namespace":"a","name":"b","decision":"Denied","reason":"r","message":"${'m'.repeat(1025)}"}`,
      'decide-request: message must be a string of 1 to 1024 characters',
    ],
    [
      '{"op":"decide-request","namespace":"a","name":"b","decision":"Denied","reason":"","message":"m"}',
      'decide-request: reason must be a string of 1 to 1024 characters',
    ],
  ];
  for (const [text, message] of cases) {
    t.throws(
      () => parseControlRequest(text),
      typeof message === 'string' ? { message } : message,
      text.slice(0, 60),
    );
  }
});

t.test('answer lines keep only known fields, each text cut to its cap', async (t) => {
  const key = '-----BEGIN PRIVATE KEY-----';
  const leaky = [
    { type: 'accepted', key },
    { type: 'renewed', volumeId: 'csi-a', notAfter: NOT_AFTER, key },
    { type: 'failed', volumeId: 'csi-b', error: 'denied', key },
    { type: 'triggered', namespace: 'a', name: 'b', alreadyIssuing: true, key },
    {
      type: 'unsaved',
      volumeId: 'csi-c',
      saveError: 'ENOSPC',
      lastError: { message: 'no space', time: NOT_AFTER, key },
      key,
    },
    { type: 'renewal-asked', volumeId: 'csi-d', key },
    { type: 'done', key },
    { type: 'error', error: 'boom', key },
  ] as unknown as Array<AnswerLine & { key: string }>;
  for (const line of leaky) {
    const text = formatAnswerLine(line);
    t.notMatch(text, /PRIVATE KEY/, `${line.type}: no stray field`);
    const { key: _, ...clean } = line;
    if (clean.type === 'unsaved') clean.lastError = { message: 'no space', time: NOT_AFTER };
    t.same(parseAnswerLine(text.trimEnd()), clean, `${line.type}: parsed back`);
  }
  t.same(
    parseAnswerLine(
      formatAnswerLine({
        type: 'renewed',
        volumeId: 'csi-a',
        notAfter: NOT_AFTER,
        nextIssuanceTime: NOT_AFTER,
      }).trimEnd(),
    ),
    { type: 'renewed', volumeId: 'csi-a', notAfter: NOT_AFTER, nextIssuanceTime: NOT_AFTER },
  );
  const long = `${'e'.repeat(ANSWER_TEXT_MAX_CHARS - 1)}🔑 and more`;
  const cut = parseAnswerLine(formatAnswerLine({ type: 'error', error: long }).trimEnd());
  t.same(
    cut,
    { type: 'error', error: `${'e'.repeat(ANSWER_TEXT_MAX_CHARS - 1)}…` },
    'cut at the cap, never inside a character',
  );
  const longId = 'v'.repeat(ANSWER_TEXT_MAX_CHARS + 1);
  t.same(
    parseAnswerLine(formatAnswerLine({ type: 'renewal-asked', volumeId: longId }).trimEnd()),
    { type: 'renewal-asked', volumeId: `${'v'.repeat(ANSWER_TEXT_MAX_CHARS)}…` },
    'a volume asked for is cut at the cap too',
  );
  const exact = 'x'.repeat(ANSWER_TEXT_MAX_CHARS);
  t.same(parseAnswerLine(formatAnswerLine({ type: 'error', error: exact }).trimEnd()), {
    type: 'error',
    error: exact,
  });
});

t.test('a malformed answer line is refused, saying what is wrong', async (t) => {
  const cases: Array<[string, string | RegExp]> = [
    ['{"type": ', /^not JSON: /],
    ['"done"', 'not a JSON object'],
    ['{}', 'type missing or not a string: not an answer'],
    ['{"type":"maybe"}', 'type "maybe": not an answer'],
    ['{"type":"error"}', 'error: error must be a string'],
    ['{"type":"renewed","volumeId":"a"}', 'renewed: notAfter must be a string'],
    ['{"type":"renewed","volumeId":"a","notAfter":"t","nextIssuanceTime":1}', /nextIssuanceTime/],
    ['{"type":"failed","volumeId":1,"error":"x"}', 'failed: volumeId must be a string'],
    ['{"type":"triggered","namespace":"a","name":"b"}', /alreadyIssuing must be true or false/],
    [
      '{"type":"triggered","namespace":"a","alreadyIssuing":false}',
      'triggered: name must be a string',
    ],
    ['{"type":"unsaved","volumeId":"a","saveError":"x"}', 'unsaved: lastError must be an object'],
    ['{"type":"renewal-asked"}', 'renewal-asked: volumeId must be a string'],
    ['{"type":"renewal-asked","volumeId":["csi-a"]}', 'renewal-asked: volumeId must be a string'],
    [
      '{"type":"unsaved","volumeId":"a","saveError":"x","lastError":{"message":"m"}}',
      'unsaved lastError: time must be a string',
    ],
  ];
  for (const [text, message] of cases) {
    t.throws(
      () => parseAnswerLine(text),
      typeof message === 'string' ? { message } : message,
      text.slice(0, 60),
    );
  }
});

t.test('LineBuffer: lines across chunks, at most its cap held', async (t) => {
  const buffer = new LineBuffer(8);
  t.same(buffer.push(Buffer.from('ab')), []);
  t.ok(buffer.partial, 'a partial line is held');
  t.same(buffer.push(Buffer.from('c\ndefgh\n\nij')), ['abc', 'defgh', '']);
  t.same(buffer.push(Buffer.from('k\n')), ['ijk']);
  t.notOk(buffer.partial);
  // A character split over two chunks is whole in its line.
  const key = Buffer.from('🔑\n');
  t.same(buffer.push(key.subarray(0, 2)), []);
  t.same(buffer.push(key.subarray(2)), ['🔑']);
  t.same(buffer.push(Buffer.from('12345678\n')), ['12345678'], 'a line of exactly the cap');
  t.throws(() => buffer.push(Buffer.from('123456789')), LineTooLongError);
  const slow = new LineBuffer(4096);
  for (let i = 0; i < 4096; i++) slow.push(Buffer.from('x'));
  t.throws(() => slow.push(Buffer.from('x')), {
    name: 'LineTooLongError',
    message: 'a line is longer than 4 KiB, the most read for one',
  });
});

/** A sink that takes lines and reports as unsent what the test has not drained yet. */
class FakeSink extends EventEmitter implements AnswerSink {
  lines: string[] = [];
  unsent = 0;

  get writableLength(): number {
    return this.unsent;
  }

  write(line: string): boolean {
    this.lines.push(line);
    this.unsent += line.length;
    return true;
  }

  /** The peer read everything. */
  drain(): void {
    this.unsent = 0;
    this.emit('drain');
  }

  volumes(): string[] {
    return this.lines.map((l) => {
      const line = parseAnswerLine(l.trimEnd());
      return 'volumeId' in line ? `${line.type} ${line.volumeId}` : line.type;
    });
  }
}

t.test('RenewStream: each volume once, as it finishes', async (t) => {
  const sink = new FakeSink();
  const stream = new RenewStream(sink, 1024);
  const outcome: RenewOutcome = { renewed: [], failed: [] };
  outcome.renewed.push({ volumeId: 'csi-a', notAfter: NOT_AFTER });
  stream.update(outcome);
  t.same(sink.volumes(), ['renewed csi-a'], 'sent at once');
  outcome.failed.push({ volumeId: 'csi-b', error: 'denied' });
  stream.update(outcome);
  stream.update(outcome);
  t.same(sink.volumes(), ['renewed csi-a', 'failed csi-b'], 'an update without news sends nothing');
  // The final outcome may be another object with the same volumes and more.
  await stream.finish({
    renewed: [
      { volumeId: 'csi-c', notAfter: NOT_AFTER },
      { volumeId: 'csi-a', notAfter: NOT_AFTER },
    ],
    failed: [{ volumeId: 'csi-b', error: 'denied' }],
  });
  t.same(sink.volumes(), ['renewed csi-a', 'failed csi-b', 'renewed csi-c']);
});

t.test('RenewStream: a client that does not read holds it back, nothing is lost', async (t) => {
  const sink = new FakeSink();
  const highWater = 1000;
  const stream = new RenewStream(sink, highWater);
  const outcome: RenewOutcome = { renewed: [], failed: [] };
  const line = formatAnswerLine({ type: 'renewed', volumeId: 'csi-0000', notAfter: NOT_AFTER });
  for (let i = 0; i < 200; i++) {
    outcome.renewed.push({ volumeId: `csi-${String(i).padStart(4, '0')}`, notAfter: NOT_AFTER });
    stream.update(outcome);
  }
  t.ok(
    sink.unsent <= highWater + line.length,
    `at most the high-water mark and one line unsent (${sink.unsent} bytes)`,
  );
  t.ok(sink.lines.length < 200, `the rest waits (${sink.lines.length} sent)`);
  t.equal(sink.listenerCount('drain'), 1, 'one wait for the drain, however many updates');
  while (sink.lines.length < 200) {
    const before = sink.lines.length;
    sink.drain();
    t.ok(sink.lines.length > before, 'each drain sends more');
  }
  // The end too waits for the client.
  outcome.failed.push({ volumeId: 'csi-late', error: 'denied' });
  sink.unsent = highWater + 1;
  let finished = false;
  const finishing = stream.finish(outcome).then(() => {
    finished = true;
  });
  await new Promise((resolve) => setImmediate(resolve));
  t.notOk(finished, 'not written while the sink is full');
  t.equal(sink.lines.length, 200);
  sink.drain();
  await finishing;
  t.equal(sink.lines.length, 201, 'written once it drained');
  t.same(new Set(sink.volumes()).size, 201, 'each volume once');
});
