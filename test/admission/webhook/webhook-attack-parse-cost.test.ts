import t from 'tap';
import {
  type Attack,
  apiServerConnection,
  attack,
  postHead,
  startWebhookChild,
  validReviewsWhile,
} from '../../support/webhook-child.js';
import { chunkedPostHead } from '../../support/webhook-tls.js';

// Four concurrent 4 MB deeply nested JSON bodies blocked the event loop, and
// a small valid review waited 6-23 s (past the configurations' timeoutSeconds: 10). Here that
// attack and its variants (sent in chunks without a length, too many objects, too wide a list,
// and the costliest bodies the limits let through) run against the real server in a child
// with a 64 MiB heap: each attacking body is refused (4xx, or its connection closed) within
// seconds, and valid reviews are answered within 2 s throughout.

const HEAP_MIB = 64;
const MB = 1_000_000;
const MIB = 1024 * 1024;
const webhook = await startWebhookChild(HEAP_MIB);
// kube-apiserver keeps its connections to a webhook alive: the valid reviews go over one.
const apiServer = await apiServerConnection(webhook);
t.teardown(() => apiServer.destroy());
t.teardown(async () => {
  // The server's log (its refusals, any failure) says what went wrong when a check failed.
  if (!t.passing()) t.comment(webhook.log());
  await webhook.stop();
});

/** A text of about size bytes: open, then unit repeated, then close. */
function body(open: string, unit: string, close: string, size: number): Buffer {
  const count = Math.floor((size - open.length - close.length) / unit.length);
  return Buffer.from(open + unit.repeat(count) + close);
}

const deep = (size: number) => body('', '[', '', size);

t.test('bodies that cost the parser: each refused within seconds, reviews served', async (t) => {
  const attacks: Array<[string, Attack]> = [];
  const send = (what: string, head: string, bytes: Buffer, chunked: boolean) =>
    attacks.push([what, attack(webhook.port, head, bytes, { holdBack: 0, chunked })]);
  for (let i = 0; i < 4; i++) {
    // The reproduced attack: 4 MB of nesting, announced with its length.
    const reproduced = deep(4 * MB);
    send(`4 MB nested ${i}`, postHead(reproduced.length), reproduced, false);
    // The same within the size limit, its length unannounced: scanned as it arrives.
    send(`3 MiB nested, chunked ${i}`, chunkedPostHead('/validate'), deep(3 * MIB), true);
  }
  for (let i = 0; i < 2; i++) {
    const objects = body('[', '{},', '{}]', 3 * MIB);
    send(`3 MiB of empty objects ${i}`, chunkedPostHead('/validate'), objects, true);
    send(
      `3 MiB of one list ${i}`,
      chunkedPostHead('/validate'),
      body('[', '0,', '0]', 3 * MIB),
      true,
    );
  }
  // What passes the limits and costs the most to parse: 3 MiB of short strings in a list of
  // fewer than 500 000 entries; parsed (in a turn of its own), then refused as no review.
  const strings = body('{"a":[', '"abcd",', '"e"]}', 3 * MIB);
  send('3 MiB of strings', postHead(strings.length), strings, false);

  await Promise.all(attacks.map(([, a]) => a.sent));
  const outcomes = Promise.all(attacks.map(([, a]) => a.outcome));
  let over = false;
  void outcomes.finally(() => {
    over = true;
  });
  const latencies = await validReviewsWhile(webhook, () => over, apiServer);
  t.ok(
    latencies.every((ms) => ms < 2_000),
    `${latencies.length} valid reviews meanwhile, the slowest in ${Math.round(Math.max(...latencies))} ms`,
  );

  const results = await outcomes;
  for (const [i, [what]] of attacks.entries()) {
    const { status, endedAfterMs } = results[i] ?? { status: 0, endedAfterMs: Infinity };
    // Seconds, not the request timeout: each is refused as soon as it is seen for what it is.
    t.ok(
      endedAfterMs < 8_000,
      `${what}: answered or cut after ${Math.round(endedAfterMs)} ms${status ? ` with ${status}` : ''}`,
    );
    if (status !== undefined) t.ok(status >= 400 && status < 500, `${what}: refused`);
  }
  t.notOk(webhook.exited(), `alive in a ${HEAP_MIB} MiB heap`);
  const peak = await webhook.peakRssMiB();
  t.ok(peak < 200, `peak resident memory ${Math.round(peak)} MiB`);
});
