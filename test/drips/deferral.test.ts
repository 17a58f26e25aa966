import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { manualClock, minutes } from '../../src/core/clock.ts';
import type { Enrollment } from '../../src/core/types.ts';
import { forEachEngine, useSinkNotify } from '../helpers/engines.ts';

/**
 * A drip step follows the campaign deferral rule: a transient failure (SMTP 4xx) leaves the step's
 * send row `deferred` with next_attempt_at on the backoff (1, 5 ... minutes; an injected clock moves
 * time), the enrollment due again then; after maxRetries attempts it is failed; an SMTP 5xx is failed
 * at once. The sink refuses RCPT TO per address.
 */
forEachEngine('a drip step that fails transiently is deferred on the campaign backoff', (h) => {
  const clock = manualClock(Date.UTC(2026, 4, 1, 9));
  const world = useSinkNotify(h, { maxRetries: 3, retryDelayMinutes: 30, clock });
  let n = 0;
  const failedEvents: { enrollment: Enrollment; error: string }[] = [];
  /** a contact enrolled in a fresh two-step sequence whose first step is due at once */
  const enrolled = async (email: string) => {
    await world.notify.contacts.upsert({ email, name: 'Ann' });
    const name = `welcome-${n++}`;
    await world.notify.drips.createSequence({
      name,
      steps: [
        { delayMinutes: 0, subject: 'Welcome {{ contact.name }}', text: 'Hello {{ contact.name }}' },
        { delayMinutes: 60, subject: 'Day two', text: 'Two' },
      ],
    });
    return world.notify.drips.enroll({ contact: email, sequence: name });
  };
  const enrollment = async (e: Enrollment) => (await world.notify.drips.getEnrollment(e.id))!;
  const stepRows = (e: Enrollment) =>
    world.notify.context.store.db.selectFrom('notify_sends').select(['status', 'next_attempt_at', 'error', 'step_index', 'attempts']).where('enrollment_id', '=', e.id).orderBy('step_index').execute();
  const delivered = (email: string) => world.sink.messages.filter((m) => m.envelope.to.includes(email));

  before(() => {
    world.notify.on('notify_enrollment_failed', (p) => {
      failedEvents.push(p as { enrollment: Enrollment; error: string });
    });
  });

  test('421 twice, then 250: deferred at +1 min, then +5 min (not retryDelayMinutes), then sent once and the sequence goes on', async () => {
    world.sink.failFor('slow@example.com', 2);
    const e = await enrolled('slow@example.com');
    assert.deepEqual(await world.notify.drips.process(), { sent: 0, failed: 0, retried: 1, reclaimed: 0 });
    let [row] = await stepRows(e);
    assert.deepEqual([row.status, Number(row.next_attempt_at)], ['deferred', clock.now() + minutes(1)]);
    assert.match(row.error ?? '', /421 4\.7\.0 Try again later/);
    assert.equal(Number(row.attempts), 1, "the step's row counts its delivery attempts, as a campaign send's does");
    let now = await enrollment(e);
    assert.deepEqual([now.status, now.attempts, now.step_index, now.next_send_at?.getTime()], ['active', 1, 0, clock.now() + minutes(1)]);
    assert.match(now.last_error ?? '', /421/);

    clock.advance(minutes(1) - 1);
    assert.deepEqual(await world.notify.drips.process(), { sent: 0, failed: 0, retried: 0, reclaimed: 0 }, 'not before its next attempt');
    assert.equal(world.sink.attempts.get('slow@example.com'), 1);

    clock.advance(1);
    assert.equal((await world.notify.drips.process()).retried, 1);
    [row] = await stepRows(e);
    assert.deepEqual([row.status, Number(row.next_attempt_at)], ['deferred', clock.now() + minutes(5)]);
    assert.equal(Number(row.attempts), 2);
    assert.equal((await enrollment(e)).attempts, 2);

    clock.advance(minutes(5));
    assert.deepEqual(await world.notify.drips.process(), { sent: 1, failed: 0, retried: 0, reclaimed: 0 });
    const rows = await stepRows(e);
    assert.deepEqual(
      rows.map((r) => [r.status, r.next_attempt_at, r.error, Number(r.attempts)]),
      [['sent', null, null, 3]],
      'one row for the step, reused by every attempt',
    );
    now = await enrollment(e);
    assert.deepEqual([now.status, now.attempts, now.step_index, now.last_error, now.next_send_at?.getTime()], ['active', 0, 1, null, clock.now() + minutes(60)]);
    assert.equal(delivered('slow@example.com').length, 1, 'delivered once');
    assert.equal(world.sink.attempts.get('slow@example.com'), 3);
  });

  test('a 421 forever: failed after maxRetries (3) attempts, notify_enrollment_failed once with the last reply', async () => {
    world.sink.failFor('never@example.com', Number.POSITIVE_INFINITY);
    const e = await enrolled('never@example.com');
    await world.notify.drips.process();
    clock.advance(minutes(1));
    await world.notify.drips.process();
    clock.advance(minutes(5));
    assert.deepEqual(await world.notify.drips.process(), { sent: 0, failed: 1, retried: 0, reclaimed: 0 });
    const [row] = await stepRows(e);
    assert.deepEqual([row.status, row.next_attempt_at], ['failed', null]);
    assert.match(row.error ?? '', /421 .*\(attempt 3 of 3; no more retries\)/);
    const now = await enrollment(e);
    assert.deepEqual([now.status, now.attempts, now.next_send_at], ['failed', 3, null]);
    const mine = failedEvents.filter((p) => p.enrollment.id === e.id);
    assert.equal(mine.length, 1);
    assert.match(mine[0].error, /421/);
    clock.advance(minutes(24 * 60));
    await world.notify.drips.process();
    assert.equal(world.sink.attempts.get('never@example.com'), 3, 'nothing is tried after the end');
  });

  test('a 550 fails the step and the enrollment at once: one attempt, no retry time, the event fires', async () => {
    world.sink.failFor('gone@example.com', Number.POSITIVE_INFINITY, '550 5.1.1 No such user');
    const e = await enrolled('gone@example.com');
    assert.deepEqual(await world.notify.drips.process(), { sent: 0, failed: 1, retried: 0, reclaimed: 0 });
    const [row] = await stepRows(e);
    assert.deepEqual([row.status, row.next_attempt_at], ['failed', null]);
    assert.match(row.error ?? '', /550 5\.1\.1 No such user/);
    const now = await enrollment(e);
    assert.deepEqual([now.status, now.attempts, now.next_send_at], ['failed', 1, null]);
    assert.equal(failedEvents.filter((p) => p.enrollment.id === e.id).length, 1);
    clock.advance(minutes(60));
    await world.notify.drips.process();
    assert.equal(world.sink.attempts.get('gone@example.com'), 1);
  });

  test('a contact who unsubscribes while a step is deferred: the row is cancelled, the enrollment cancelled, nothing more tried', async () => {
    world.sink.failFor('leaver@example.com', 1);
    const e = await enrolled('leaver@example.com');
    assert.equal((await world.notify.drips.process()).retried, 1);
    const contact = (await world.notify.contacts.get('leaver@example.com'))!;
    const res = await world.notify.fetch(new Request(`http://localhost/notify/unsubscribe/${contact.unsubscribe_token}`));
    assert.equal(res.status, 200);
    const [row] = await stepRows(e);
    assert.deepEqual([row.status, row.next_attempt_at], ['cancelled', null]);
    assert.equal((await enrollment(e)).status, 'cancelled');
    clock.advance(minutes(10));
    await world.notify.drips.process();
    assert.equal(world.sink.attempts.get('leaver@example.com'), 1);
  });
});
