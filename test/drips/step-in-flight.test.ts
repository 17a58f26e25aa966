import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { minutes } from '../../src/core/clock.ts';
import { runDrips } from '../../src/core/drip-run.ts';
import { newToken } from '../../src/core/tokens.ts';
import { ENGINES } from '../helpers/engines.ts';
import { recordingLogger } from '../helpers/log-lines.ts';
import { dripWorld, enrollInTwoSteps } from './helpers.ts';

// A reclaimed enrollment whose step row was touched less than staleLockMinutes ago is being delivered
// by another run right now: this run neither sends it again nor marks it interrupted, and comes back
// to it once the row is stale.
for (const engine of ENGINES) {
  describe(`a drip step another run is delivering [${engine}]`, () => {
    test('not sent, not interrupted; the enrollment waits until the row is stale, then the step is interrupted and the sequence continues', async (t) => {
      const { logger, lines } = recordingLogger();
      const w = await dripWorld(engine, { logger }); // staleLockMinutes 30
      t.after(() => w.close());
      const store = w.notify.context.store;
      const { seq, e } = await enrollInTwoSteps(w, 'busy');
      // the other run claimed the enrollment long ago and touched the step's row only now
      await store.enrollments.claimDue(w.clock.now(), 10, newToken());
      w.clock.advance(minutes(31));
      const touched = w.clock.now();
      await store.sends.claimSteps([{ token: newToken(), enrollment_id: e.id, step_id: seq.steps[0].id, step_index: 0, contact_id: e.contact_id, to_email: 'ann@example.com', subject: 'One', status: 'sending' }], touched);
      const rows = () => w.notify.context.store.db.selectFrom('notify_sends').select(['id', 'status', 'error']).where('enrollment_id', '=', e.id).execute();

      const first = await runDrips(w.notify.context);
      assert.deepEqual({ reclaimed: first.reclaimed, claimed: first.claimed, sent: first.sent, interrupted: first.interrupted, cancelled: first.cancelled }, { reclaimed: 1, claimed: 1, sent: 0, interrupted: 0, cancelled: 0 });
      assert.equal(w.mailer.messages.length, 0, 'not delivered a second time');
      assert.deepEqual(
        (await rows()).map((r) => [r.status, r.error]),
        [['sending', null]],
        'the row is left to the run delivering it',
      );
      const waiting = (await w.notify.drips.getEnrollment(e.id))!;
      assert.deepEqual({ status: waiting.status, step_index: waiting.step_index, attempts: waiting.attempts }, { status: 'active', step_index: 0, attempts: 0 });
      const staleAt = touched + minutes(30) + 1000;
      assert.equal(waiting.next_send_at?.getTime(), staleAt, 'due again just after the row turns stale');

      w.clock.set(staleAt - 1);
      // the row is stale by now (touched over staleLockMinutes ago): settled as the run starts, as a campaign's are
      const early = await runDrips(w.notify.context);
      assert.equal(early.claimed, 0, 'not claimed before then');
      w.clock.set(staleAt);
      const second = await runDrips(w.notify.context);
      assert.deepEqual({ claimed: second.claimed, sent: second.sent, interrupted: early.interrupted + second.interrupted }, { claimed: 1, sent: 0, interrupted: 1 });
      const [row] = await rows();
      assert.deepEqual({ status: row.status, error: row.error }, { status: 'failed', error: 'interrupted' });
      const warned = lines.filter((l) => l.level === 40 && /not resent/.test(String(l.msg)));
      assert.deepEqual(
        warned.map((l) => ({ enrollmentId: l.enrollmentId, step: l.step, sendId: l.sendId })),
        [{ enrollmentId: e.id, step: 0, sendId: row.id }],
        'the operator is told which step was not resent',
      );
      const moved = (await w.notify.drips.getEnrollment(e.id))!;
      assert.deepEqual({ status: moved.status, step_index: moved.step_index }, { status: 'active', step_index: 1 });
      assert.equal(moved.next_send_at?.getTime(), staleAt + minutes(60), 'the next step is due its delay from then');
      assert.equal(w.mailer.messages.length, 0);
    });

    test('a run that marked the step interrupted and crashed before moving the enrollment: the next run advances it without sending', async (t) => {
      const w = await dripWorld(engine);
      t.after(() => w.close());
      const store = w.notify.context.store;
      const { seq, e } = await enrollInTwoSteps(w, 'crashed');
      await store.enrollments.claimDue(w.clock.now(), 10, newToken());
      const [row] = await store.sends.claimSteps([{ token: newToken(), enrollment_id: e.id, step_id: seq.steps[0].id, step_index: 0, contact_id: e.contact_id, to_email: 'ann@example.com', subject: 'One', status: 'sending' }], w.clock.now());
      w.clock.advance(minutes(31));
      // a second run found the row stale and marked it, then died before writing the enrollment's move
      assert.equal(await store.sends.interrupt(row.id, w.clock.now() - minutes(30), w.clock.now()), true);
      w.clock.advance(minutes(1));

      const r = await runDrips(w.notify.context);
      assert.deepEqual({ reclaimed: r.reclaimed, sent: r.sent, failed: r.failed, retried: r.retried }, { reclaimed: 1, sent: 0, failed: 0, retried: 0 });
      assert.equal(w.mailer.messages.length, 0, 'the provider may have taken it: not resent');
      const moved = (await w.notify.drips.getEnrollment(e.id))!;
      assert.deepEqual({ status: moved.status, step_index: moved.step_index, attempts: moved.attempts }, { status: 'active', step_index: 1, attempts: 0 });
      assert.equal(moved.next_send_at?.getTime(), w.clock.now() + minutes(60));
      w.clock.advance(minutes(60));
      assert.equal((await runDrips(w.notify.context)).sent, 1);
      assert.deepEqual(
        w.mailer.messages.map((m) => m.subject),
        ['Two'],
      );
    });

    test('a step delivered by a run that crashed before moving the enrollment: advanced without sending, and logged with its send', async (t) => {
      const { logger, lines } = recordingLogger();
      const w = await dripWorld(engine, { logger });
      t.after(() => w.close());
      const store = w.notify.context.store;
      await w.notify.contacts.upsert({ email: 'ann@example.com' });
      const seq = await w.notify.drips.createSequence({ name: 'delivered', steps: [{ delayMinutes: 10, subject: 'One', text: 'one' }] });
      const e = await w.notify.drips.enroll({ contact: 'ann@example.com', sequence: seq.id });
      w.clock.advance(minutes(10));
      await store.enrollments.claimDue(w.clock.now(), 10, newToken());
      const [row] = await store.sends.claimSteps([{ token: newToken(), enrollment_id: e.id, step_id: seq.steps[0].id, step_index: 0, contact_id: e.contact_id, to_email: 'ann@example.com', subject: 'One', status: 'sending' }], w.clock.now());
      await store.sends.finish([{ id: row.id, status: 'sent', message_id: '<m@x>' }], w.clock.now());
      w.clock.advance(minutes(31));

      const r = await runDrips(w.notify.context);
      assert.deepEqual({ sent: r.sent, advanced: r.advanced, interrupted: r.interrupted }, { sent: 0, advanced: 1, interrupted: 0 });
      assert.equal(w.mailer.messages.length, 0);
      assert.equal((await w.notify.drips.getEnrollment(e.id))!.status, 'completed');
      const said = lines.filter((l) => /already delivered/.test(String(l.msg)));
      assert.deepEqual(
        said.map((l) => ({ level: l.level, enrollmentId: l.enrollmentId, step: l.step, sendId: l.sendId })),
        [{ level: 30, enrollmentId: e.id, step: 0, sendId: row.id }],
      );
    });
  });
}
