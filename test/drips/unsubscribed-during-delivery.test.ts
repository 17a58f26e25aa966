import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { minutes } from '../../src/core/clock.ts';
import { runDrips } from '../../src/core/drip-run.ts';
import { ENGINES } from '../helpers/engines.ts';
import { recordingLogger } from '../helpers/log-lines.ts';
import { type DripWorld, dripWorld, unsubscribingMailer } from './helpers.ts';

// A contact who unsubscribes while the worker is handing their step to the mail server: the step was
// delivered, but the enrollment the unsubscribe cancelled stays cancelled (the run's claim on it was
// taken back), and the run says in its log how many enrollments it left alone.
for (const engine of ENGINES) {
  describe(`a contact unsubscribed during their step's delivery [${engine}]`, () => {
    test('the step is recorded as sent, the enrollment stays cancelled, the other enrollment moves on; one warning counts the one left alone', async (t) => {
      const world: { w?: DripWorld } = {};
      const { mailer, sent } = unsubscribingMailer(world, 'ann@example.com', 'ann@example.com');
      const { logger, lines } = recordingLogger();
      const w = await dripWorld(engine, { mailer, logger });
      world.w = w;
      t.after(() => w.close());
      await w.notify.drips.createSequence({
        name: 'two',
        steps: [
          { delayMinutes: 0, subject: 'One', text: 'one' },
          { delayMinutes: 60, subject: 'Two', text: 'two' },
        ],
      });
      const enrolments = [];
      for (const email of ['ann@example.com', 'bob@example.com']) {
        await w.notify.contacts.upsert({ email });
        enrolments.push(await w.notify.drips.enroll({ contact: email, sequence: 'two' }));
      }
      const [ann, bob] = enrolments;
      const takenBack = () => lines.filter((l) => /taken back/.test(String(l.msg)));

      const r = await runDrips(w.notify.context);
      assert.deepEqual({ claimed: r.claimed, sent: r.sent, failed: r.failed, cancelled: r.cancelled }, { claimed: 2, sent: 2, failed: 0, cancelled: 0 });
      const annNow = (await w.notify.drips.getEnrollment(ann.id))!;
      assert.deepEqual({ status: annNow.status, step_index: annNow.step_index, next_send_at: annNow.next_send_at }, { status: 'cancelled', step_index: 0, next_send_at: null }, 'not moved to step two');
      const bobNow = (await w.notify.drips.getEnrollment(bob.id))!;
      assert.deepEqual({ status: bobNow.status, step_index: bobNow.step_index }, { status: 'active', step_index: 1 });
      const rows = await w.notify.context.store.db.selectFrom('notify_sends').select(['enrollment_id', 'status']).orderBy('enrollment_id').execute();
      assert.deepEqual(
        rows.map((row) => [Number(row.enrollment_id), row.status]),
        [
          [ann.id, 'sent'],
          [bob.id, 'sent'],
        ],
        'the delivery itself is recorded',
      );
      assert.deepEqual(
        takenBack().map((l) => ({ level: l.level, lost: l.lost })),
        [{ level: 40, lost: 1 }],
        'one warning, counting the one enrollment left alone',
      );

      w.clock.advance(minutes(60));
      const next = await runDrips(w.notify.context);
      assert.deepEqual({ claimed: next.claimed, sent: next.sent }, { claimed: 1, sent: 1 });
      assert.deepEqual(
        sent.map((m) => [m.to[0], m.subject]).sort(),
        [
          ['ann@example.com', 'One'],
          ['bob@example.com', 'One'],
          ['bob@example.com', 'Two'],
        ],
      );
      assert.equal(takenBack().length, 1, 'a run that keeps all its claims warns of nothing');
    });
  });
}
