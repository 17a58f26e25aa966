import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runDrips } from '../../src/core/drip-run.ts';
import { ENGINES } from '../helpers/engines.ts';
import { type DripWorld, dripWorld, unsubscribingMailer } from './helpers.ts';

// A run claims its steps a chunk at a time and hands them to the mail server one slot at a time: a
// contact who unsubscribes while their step waits in the chunk (its row `queued`, not handed over)
// is not sent it. Only the steps already handed over can still go out, as for a campaign.
for (const engine of ENGINES) {
  describe(`a contact unsubscribed while their step waits in the run's chunk [${engine}]`, () => {
    test('not delivered: the row and the enrollment are cancelled; the one before it was delivered and moves on', async (t) => {
      const world: { w?: DripWorld } = {};
      const { mailer, sent } = unsubscribingMailer(world, 'ann@example.com', 'bob@example.com');
      // a throttle leaves one pool slot: Bob's step waits while Ann's is delivered
      const w = await dripWorld(engine, { mailer, throttleMs: 5 });
      world.w = w;
      t.after(() => w.close());
      await w.notify.drips.createSequence({ name: 'one', steps: [{ delayMinutes: 0, subject: 'One', text: 'one' }] });
      const enrolments = [];
      for (const email of ['ann@example.com', 'bob@example.com']) {
        await w.notify.contacts.upsert({ email });
        enrolments.push(await w.notify.drips.enroll({ contact: email, sequence: 'one' }));
      }
      const r = await runDrips(w.notify.context);
      assert.deepEqual({ claimed: r.claimed, sent: r.sent, failed: r.failed }, { claimed: 2, sent: 1, failed: 0 });
      assert.deepEqual(
        sent.map((m) => m.to[0]),
        ['ann@example.com'],
        'Bob is not sent his step',
      );
      const rows = await w.notify.context.store.db.selectFrom('notify_sends').select(['enrollment_id', 'status', 'attempts']).orderBy('enrollment_id').execute();
      assert.deepEqual(
        rows.map((row) => [Number(row.enrollment_id), row.status, Number(row.attempts)]),
        [
          [enrolments[0].id, 'sent', 1],
          [enrolments[1].id, 'cancelled', 0],
        ],
      );
      assert.deepEqual(
        await Promise.all(enrolments.map(async (e) => (await w.notify.drips.getEnrollment(e.id))?.status)),
        ['completed', 'cancelled'],
      );
      assert.equal((await runDrips(w.notify.context)).claimed, 0, 'nothing left due');
      assert.equal(sent.length, 1);
    });
  });
}
