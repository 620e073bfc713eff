import { once } from 'node:events';
import { connect } from 'node:net';
import t from 'tap';
import {
  type Attack,
  attack,
  postHead,
  startWebhookChild,
  validReviewLatencyMs,
  validReviewsWhile,
} from '../../support/webhook-child.js';
import { chunkedPostHead } from '../../support/webhook-tls.js';

// 60 unauthenticated TLS connections each sending all but the last byte of
// a 4 MB body pushed the webhook to 373 MiB (OOM at 256 MiB), and nothing closed them. Here
// that attack and its variants (bodies within the size limit, chunked bodies, stalled headers,
// connections that never start TLS) run against the real server in a child with a 64 MiB
// heap: every connection is closed within 30 s of opening, valid reviews are answered within
// 2 s throughout, and the child's peak resident memory stays under 200 MiB.

const HEAP_MIB = 64;
const MB = 1_000_000;
const MIB = 1024 * 1024;
const webhook = await startWebhookChild(HEAP_MIB);
t.teardown(async () => {
  // The server's log (its refusals, any failure) says what went wrong when a check failed.
  if (!t.passing()) t.comment(webhook.log());
  await webhook.stop();
});

/** A JSON body of size bytes: one long string, as a review's CSR would be. */
function body(size: number): Buffer {
  const text = Buffer.alloc(size, 'a');
  text.write('{"a":"');
  return text;
}

t.test('60 slow bodies and stalled connections: all cut, reviews served', async (t) => {
  const fourMB = body(4 * MB);
  const threeMiB = body(3 * MIB);
  const attacks: Array<[string, Attack]> = [];
  for (let i = 0; i < 15; i++) {
    // The reproduced attack: a 4 MB body announced, all but its last byte sent.
    attacks.push([
      `4 MB body ${i}`,
      attack(webhook.port, postHead(fourMB.length), fourMB, {
        holdBack: 1,
        chunked: false,
        untilClosed: true,
      }),
    ]);
    // Within the size limit: the shared budget takes a few, refuses the rest.
    attacks.push([
      `3 MiB body ${i}`,
      attack(webhook.port, postHead(threeMiB.length), threeMiB, {
        holdBack: 1,
        chunked: false,
        untilClosed: true,
      }),
    ]);
    // No length announced: counted as it arrives.
    attacks.push([
      `chunked body ${i}`,
      attack(webhook.port, chunkedPostHead('/validate'), threeMiB, {
        holdBack: 1,
        chunked: true,
        untilClosed: true,
      }),
    ]);
  }
  for (let i = 0; i < 10; i++) {
    attacks.push([
      `stalled headers ${i}`,
      attack(webhook.port, 'POST /validate HTTP/1.1\r\nHost: webhook\r\n', Buffer.alloc(0), {
        holdBack: 0,
        chunked: false,
        untilClosed: true,
      }),
    ]);
  }
  const opened = performance.now();
  const noTls = Array.from({ length: 5 }, () => {
    const socket = connect(webhook.port, '127.0.0.1');
    socket.on('error', () => {});
    return once(socket, 'close').then(() => performance.now() - opened);
  });
  t.equal(attacks.length + noTls.length, 60);

  // In full swing: every attacker has sent all it will (or was cut already).
  await Promise.all(attacks.map(([, a]) => a.sent));
  const outcomes = Promise.all(attacks.map(([, a]) => a.outcome));
  let over = false;
  void outcomes.finally(() => {
    over = true;
  });
  // Valid reviews one after the other while any attacking connection is open.
  const latencies = await validReviewsWhile(webhook, () => over);
  t.ok(
    latencies.every((ms) => ms < 2_000),
    `${latencies.length} valid reviews meanwhile, the slowest in ${Math.round(Math.max(...latencies))} ms`,
  );

  const results = await outcomes;
  for (const [i, [what]] of attacks.entries()) {
    const { status, endedAfterMs } = results[i] ?? { status: 0, endedAfterMs: Infinity };
    t.ok(
      endedAfterMs < 30_000,
      `${what}: closed by the server after ${Math.round(endedAfterMs)} ms${status ? ` with ${status}` : ''}`,
    );
    if (status !== undefined) t.ok(status >= 400 && status < 600, `${what}: refused`);
  }
  for (const [i, closed] of (await Promise.all(noTls)).entries()) {
    t.ok(closed < 30_000, `no TLS ${i}: closed after ${Math.round(closed)} ms`);
  }
  // How each kind was cut. (A refused body's answer can be lost to the client when the server
  // closes a connection with bytes still unread: then only the close is seen.)
  const statusesOf = (kind: string) =>
    results.filter((_, i) => attacks[i]?.[0].startsWith(kind)).map((r) => r.status);
  t.notOk(
    statusesOf('4 MB body').includes(408),
    'the 4 MB bodies: cut at their length, not timed out',
  );
  const held = [...statusesOf('3 MiB body'), ...statusesOf('chunked body')].filter(
    (s) => s === 408,
  );
  t.ok(
    held.length <= 2,
    `${held.length} of 30 bodies within the size limit held until the request timeout: the shared budget holds two`,
  );
  t.same(new Set(statusesOf('stalled headers')), new Set([408]), 'stalled headers: 408');
  t.notOk(webhook.exited(), `alive in a ${HEAP_MIB} MiB heap`);
  const peak = await webhook.peakRssMiB();
  t.ok(peak < 200, `peak resident memory ${Math.round(peak)} MiB`);
  t.ok((await validReviewLatencyMs(webhook)) < 2_000, 'and serving after');
});
