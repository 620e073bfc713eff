import { setTimeout as delay } from 'node:timers/promises';
import t from 'tap';
import { CertificateKind } from '../../src/api/certificate.js';
import { findCondition, formatTimestamp, isConditionTrue } from '../../src/api/conditions.js';
import { goTimeString } from '../../src/base/go-text.js';
import {
  CERTIFICATE_WAIT_MS,
  certificateObject,
  createCaClusterIssuer,
  startCertificateStack,
  updateCertificate,
} from '../support/certificate-stack.js';
import { JumpClock } from '../support/jump-clock.js';

const NS = 'apps';
const MINUTE = 60_000;
// One hour, renewed 20 minutes before it ends: due 40 minutes in.
const spec = {
  dnsNames: ['w.example'],
  privateKey: { algorithm: 'ECDSA' as const },
  duration: '1h',
  renewBefore: '20m',
};

t.test(
  'a certificate due outside its renewal window is renewed when the window opens, not before',
  { timeout: 4 * CERTIFICATE_WAIT_MS },
  async (t) => {
    const clock = new JumpClock();
    const stack = await startCertificateStack(t, { clock });
    await createCaClusterIssuer(stack.store);
    await stack.store.create(CertificateKind, certificateObject(NS, 'windowed', spec));
    const first = await stack.ready(NS, 'windowed', 1);
    const notAfter = Date.parse(first.status?.notAfter ?? '');
    const desired = notAfter - 20 * MINUTE;
    // A daily two-minute window about ten minutes before the end, well after the desired time.
    const opens = Math.floor((notAfter - 10 * MINUTE) / MINUTE) * MINUTE;
    const open = new Date(opens);
    await updateCertificate(stack.store, NS, 'windowed', (c) => ({
      ...c,
      spec: {
        ...c.spec,
        renewal: {
          policy: 'RenewBefore',
          windows: [
            { cron: `${open.getUTCMinutes()} ${open.getUTCHours()} * * *`, windowDuration: '2m' },
          ],
        },
      },
    }));
    await stack.certificate(NS, 'windowed', (c) => c.status?.renewalTime === formatTimestamp(open));
    t.pass('the renewal time moves to the window’s start');

    clock.jump(desired + MINUTE - clock.now());
    // Due, but the window is shut: give the controllers time to act, and see they do not.
    await delay(500);
    const waiting = await stack.certificate(NS, 'windowed', () => true);
    t.equal(waiting.status?.revision, 1, 'due but outside the window: not renewed');
    t.notOk(isConditionTrue(waiting.status?.conditions, 'Issuing'), 'not issuing');

    // A second past the start: the trigger's timer counts from the start of its sync.
    clock.jump(opens + 1000 - clock.now());
    // The new certificate's own window is a day away, past its end: it will be WindowError.
    const renewed = await stack.certificate(NS, 'windowed', (c) => c.status?.revision === 2);
    t.equal(renewed.status?.revision, 2, 'the window opens: renewed');
    const issuing = stack.events
      .eventsFor('Certificate', 'windowed', NS)
      .filter((e) => e.reason === 'Issuing')
      .map((e) => e.message);
    t.ok(
      issuing.includes(`Renewing certificate as renewal was scheduled at ${goTimeString(open)}`),
      'the Issuing event names the window’s start',
    );
    t.notOk(
      stack.events
        .eventsFor('Certificate', 'windowed', NS)
        .some((e) => e.reason === 'WindowError' && e.message.startsWith('Renewing')),
      'a renewal inside its window: no WindowError from the trigger',
    );
  },
);

t.test(
  'no window fits: Ready=False WindowError, then renewed at the desired time with a warning',
  { timeout: 4 * CERTIFICATE_WAIT_MS },
  async (t) => {
    const clock = new JumpClock();
    const stack = await startCertificateStack(t, { clock });
    await createCaClusterIssuer(stack.store);
    await stack.store.create(
      CertificateKind,
      certificateObject(NS, 'nowindow', {
        ...spec,
        // The 30th of February never comes.
        renewal: { policy: 'RenewBefore', windows: [{ cron: '0 0 30 2 *', windowDuration: '1h' }] },
      }),
    );
    const first = await stack.certificate(
      NS,
      'nowindow',
      (c) =>
        c.status?.revision === 1 &&
        findCondition(c.status.conditions, 'Ready')?.reason === 'WindowError',
    );
    const notBefore = new Date(first.status?.notBefore ?? '');
    const notAfter = new Date(first.status?.notAfter ?? '');
    const desired = new Date(notAfter.getTime() - 20 * MINUTE);
    t.equal(
      first.status?.renewalTime,
      formatTimestamp(desired),
      'the renewal time is the desired one',
    );
    const noFit = `cannot find a time with the given windows between ${goTimeString(notBefore)} and ${goTimeString(notAfter)} for: ${goTimeString(desired)}`;
    t.match(findCondition(first.status?.conditions, 'Ready'), {
      status: 'False',
      reason: 'WindowError',
      message: `Could not calculate renewal time: ${noFit}`,
    });

    clock.jump(desired.getTime() + 1000 - clock.now());
    await stack.certificate(NS, 'nowindow', (c) => (c.status?.revision ?? 0) >= 2);
    const events = stack.events
      .eventsFor('Certificate', 'nowindow', NS)
      .map((e) => `${e.type} ${e.reason}: ${e.message}`);
    t.ok(
      events.includes(`Warning WindowError: Could not calculate renewal time: ${noFit}`),
      'the readiness controller warns',
    );
    const warned = events.indexOf(
      `Warning WindowError: Renewing certificate without satisfying renewal windows due to ${noFit}`,
    );
    const issued = events.indexOf(
      `Normal Issuing: Renewing certificate without satisfying renewal windows at: ${goTimeString(desired)}`,
    );
    t.ok(warned >= 0, 'the trigger warns with the windows’ error');
    t.ok(issued > warned, 'then issues as a renewal, with the renewal time');
  },
);
