import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { minutes } from '../../src/core/clock.ts';
import { runDrips } from '../../src/core/drip-run.ts';
import { newToken } from '../../src/core/tokens.ts';
import type { SendStatus } from '../../src/core/types.ts';
import { ENGINES } from '../helpers/engines.ts';
import { recordingLogger } from '../helpers/log-lines.ts';
import { type DripWorld, dripWorld, enrollInTwoSteps } from './helpers.ts';

/**
 * A run that finds its claimed step already has a send row (an earlier run got that far and
 * crashed, its claim reclaimed as stale) decides from the row: what the row says decides whether
 * the step is sent, and where the enrollment goes.
 */

/** A run that claimed Ann's step, wrote its row with `status` (and `error`), then crashed; 31 minutes later its claim is stale. */
async function crashedWithRow(w: DripWorld, name: string, status: SendStatus, error: string | null) {
  const { seq, e } = await enrollInTwoSteps(w, name);
  const store = w.notify.context.store;
  await store.enrollments.claimDue(w.clock.now(), 10, newToken());
  const [row] = await store.sends.claimSteps([{ token: newToken(), enrollment_id: e.id, step_id: seq.steps[0].id, step_index: 0, contact_id: e.contact_id, to_email: 'ann@example.com', subject: 'One', status: 'sending' }], w.clock.now());
  await store.db.updateTable('notify_sends').set({ status, error }).where('id', '=', row.id).execute();
  w.clock.advance(minutes(31));
  return { seq, e, row };
}

const stepRows = (w: DripWorld, enrollmentId: number) =>
  w.notify.context.store.db.selectFrom('notify_sends').select(['id', 'token', 'status', 'error', 'step_index', 'attempts']).where('enrollment_id', '=', enrollmentId).orderBy('step_index').execute();

for (const engine of ENGINES) {
  describe(`a reclaimed drip step whose send row an earlier run left [${engine}]`, () => {
    test('cancelled: nothing sent, the enrollment cancelled and counted so', async (t) => {
      const w = await dripWorld(engine);
      t.after(() => w.close());
      const { e } = await crashedWithRow(w, 'cancelled-row', 'cancelled', null);

      const r = await runDrips(w.notify.context);
      assert.deepEqual(
        { reclaimed: r.reclaimed, claimed: r.claimed, sent: r.sent, cancelled: r.cancelled, advanced: r.advanced, interrupted: r.interrupted },
        { reclaimed: 1, claimed: 1, sent: 0, cancelled: 1, advanced: 0, interrupted: 0 },
      );
      assert.equal(w.mailer.messages.length, 0);
      const now = (await w.notify.drips.getEnrollment(e.id))!;
      assert.deepEqual({ status: now.status, step_index: now.step_index, next_send_at: now.next_send_at }, { status: 'cancelled', step_index: 0, next_send_at: null });
      assert.deepEqual(
        (await stepRows(w, e.id)).map((s) => s.status),
        ['cancelled'],
      );
      w.clock.advance(minutes(120));
      assert.equal((await runDrips(w.notify.context)).claimed, 0, 'never claimed again');
    });

    for (const [status, error] of [
      ['failed', 'smtp connection refused'],
      ['deferred', '421 4.7.0 Try again later'],
    ] as const) {
      test(`${status} (${error}): this run makes the next attempt with the same row, then the sequence goes on`, async (t) => {
        const w = await dripWorld(engine);
        t.after(() => w.close());
        const { e, row } = await crashedWithRow(w, `${status}-row`, status, error);
        const attemptsBefore = Number(row.attempts);

        const r = await runDrips(w.notify.context);
        assert.deepEqual({ claimed: r.claimed, sent: r.sent, failed: r.failed, cancelled: r.cancelled, advanced: r.advanced }, { claimed: 1, sent: 1, failed: 0, cancelled: 0, advanced: 0 });
        assert.deepEqual(
          w.mailer.messages.map((m) => [m.to[0], m.subject, m.sendToken]),
          [['ann@example.com', 'One', row.token]],
          'delivered once, under the row the earlier run wrote',
        );
        const rows = await stepRows(w, e.id);
        assert.deepEqual(
          rows.map((s) => [s.id, s.status, s.error]),
          [[row.id, 'sent', null]],
          'one row for the step, now sent',
        );
        assert.equal(Number(rows[0].attempts), attemptsBefore + 1, 'the attempt is counted on the row');
        const now = (await w.notify.drips.getEnrollment(e.id))!;
        assert.deepEqual({ status: now.status, step_index: now.step_index, attempts: now.attempts }, { status: 'active', step_index: 1, attempts: 0 });
        assert.equal(now.next_send_at?.getTime(), w.clock.now() + minutes(60));
      });
    }

    test('queued (its run stopped before handing it to the mailer): this run sends it once with that row, then the sequence goes on', async (t) => {
      const w = await dripWorld(engine);
      t.after(() => w.close());
      const { e, row } = await crashedWithRow(w, 'queued-row', 'queued', null);

      const r = await runDrips(w.notify.context);
      assert.deepEqual({ claimed: r.claimed, sent: r.sent, failed: r.failed, cancelled: r.cancelled, advanced: r.advanced, interrupted: r.interrupted }, { claimed: 1, sent: 1, failed: 0, cancelled: 0, advanced: 0, interrupted: 0 });
      assert.deepEqual(
        w.mailer.messages.map((m) => [m.to[0], m.subject, m.sendToken]),
        [['ann@example.com', 'One', row.token]],
      );
      assert.deepEqual(
        (await stepRows(w, e.id)).map((s) => [s.id, s.status]),
        [[row.id, 'sent']],
      );
      const now = (await w.notify.drips.getEnrollment(e.id))!;
      assert.deepEqual({ status: now.status, step_index: now.step_index }, { status: 'active', step_index: 1 });
    });

    test('a step the sequence no longer has: the enrollment is completed, nothing sent', async (t) => {
      const w = await dripWorld(engine);
      t.after(() => w.close());
      const { seq, e } = await enrollInTwoSteps(w, 'shrunk');
      assert.equal((await runDrips(w.notify.context)).sent, 1);
      // the second step removed from the database (an operator's edit) while Ann waits for it
      await w.notify.context.store.db.deleteFrom('notify_steps').where('id', '=', seq.steps[1].id).execute();
      w.clock.advance(minutes(60));

      const r = await runDrips(w.notify.context);
      assert.deepEqual({ claimed: r.claimed, sent: r.sent, failed: r.failed, cancelled: r.cancelled }, { claimed: 1, sent: 0, failed: 0, cancelled: 0 });
      assert.deepEqual(
        w.mailer.messages.map((m) => m.subject),
        ['One'],
      );
      const now = (await w.notify.drips.getEnrollment(e.id))!;
      assert.deepEqual({ status: now.status, step_index: now.step_index, next_send_at: now.next_send_at }, { status: 'completed', step_index: 1, next_send_at: null });
      assert.deepEqual(
        (await stepRows(w, e.id)).map((s) => [s.step_index, s.status]),
        [[0, 'sent']],
      );
    });

    test('enrollments left processing by a crashed run: one warning with their count; none when nothing was reclaimed', async (t) => {
      const { logger, lines } = recordingLogger();
      const w = await dripWorld(engine, { logger });
      t.after(() => w.close());
      const reclaimLines = () => lines.filter((l) => /returned to 'active'/.test(String(l.msg)));
      await enrollInTwoSteps(w, 'reclaimed');
      await runDrips(w.notify.context);
      assert.deepEqual(reclaimLines(), [], 'nothing reclaimed, nothing said');

      await w.notify.contacts.upsert({ email: 'bob@example.com' });
      await w.notify.drips.enroll({ contact: 'bob@example.com', sequence: 'reclaimed' });
      w.clock.advance(minutes(10));
      await w.notify.context.store.enrollments.claimDue(w.clock.now(), 10, newToken());
      w.clock.advance(minutes(31));
      const r = await runDrips(w.notify.context);
      assert.equal(r.reclaimed, 1);
      assert.deepEqual(
        reclaimLines().map((l) => ({ level: l.level, reclaimed: l.reclaimed, msg: l.msg })),
        [{ level: 40, reclaimed: 1, msg: "1 drip enrollments left 'processing' by an interrupted run returned to 'active'" }],
      );
    });
  });
}
