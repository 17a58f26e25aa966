import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { minutes } from '../../src/core/clock.ts';
import { runDrips } from '../../src/core/drip-run.ts';
import type { Mailer, OutgoingMessage } from '../../src/mail/contract.ts';
import { ENGINES } from '../helpers/engines.ts';
import { recordingLogger } from '../helpers/log-lines.ts';
import { type DripWorld, dripWorld } from './helpers.ts';

/** What a drip step's delivery leaves behind: the message's headers and step data, and the rows of a deferral raced by an unsubscribe. */
for (const engine of ENGINES) {
  describe(`drip step delivery [${engine}]`, () => {
    test("a step deferred (421) while its contact unsubscribed: the step's row cancelled, not left waiting; the other contact's deferral stands", async (t) => {
      const world: { w?: DripWorld } = {};
      const tried: OutgoingMessage[] = [];
      const mailer: Mailer = {
        name: 'deferring',
        async send(message) {
          tried.push(message);
          if (message.to[0] === 'ann@example.com') {
            const ann = (await world.w!.notify.contacts.get('ann@example.com'))!;
            const res = await world.w!.notify.fetch(new Request(`http://x/notify/unsubscribe/${ann.unsubscribe_token}`, { method: 'POST', body: new URLSearchParams({ 'List-Unsubscribe': 'One-Click' }) }));
            assert.equal(res.status, 200);
          }
          throw Object.assign(new Error('421 4.7.0 Try again later'), { responseCode: 421 });
        },
      };
      const { logger, lines } = recordingLogger();
      const w = await dripWorld(engine, { mailer, logger });
      world.w = w;
      t.after(() => w.close());
      await w.notify.drips.createSequence({ name: 'two', steps: [{ delayMinutes: 0, subject: 'One', text: 'one' }] });
      const enrolments = [];
      for (const email of ['ann@example.com', 'bob@example.com']) {
        await w.notify.contacts.upsert({ email });
        enrolments.push(await w.notify.drips.enroll({ contact: email, sequence: 'two' }));
      }
      const [ann, bob] = enrolments;

      const r = await runDrips(w.notify.context);
      assert.deepEqual({ claimed: r.claimed, sent: r.sent, failed: r.failed, retried: r.retried }, { claimed: 2, sent: 0, failed: 0, retried: 1 }, "only Bob's deferral counts as a retry");
      const rows = await w.notify.context.store.db.selectFrom('notify_sends').select(['enrollment_id', 'status', 'next_attempt_at']).orderBy('enrollment_id').execute();
      assert.deepEqual(
        rows.map((row) => [Number(row.enrollment_id), row.status, row.next_attempt_at === null]),
        [
          [ann.id, 'cancelled', true],
          [bob.id, 'deferred', false],
        ],
      );
      assert.equal((await w.notify.drips.getEnrollment(ann.id))?.status, 'cancelled');
      assert.equal((await w.notify.drips.getEnrollment(bob.id))?.status, 'active');
      assert.deepEqual(
        lines.filter((l) => /taken back/.test(String(l.msg))).map((l) => l.lost),
        [1],
        "one warning, counting Ann's enrollment only",
      );

      w.clock.advance(minutes(120));
      await runDrips(w.notify.context);
      assert.deepEqual(
        tried.map((m) => m.to[0]),
        ['ann@example.com', 'bob@example.com', 'bob@example.com'],
        'Ann is never tried again',
      );
    });

    test("a step's message: the sequence's Feedback-ID (kind drip, the sequence id), no List-Id, and its position in the sequence for the template", async (t) => {
      const w = await dripWorld(engine, { feedbackId: '{kind}-{id}-{list}:acme', listIdDomain: 'lists.example.com' });
      t.after(() => w.close());
      await w.notify.contacts.upsert({ email: 'ann@example.com' });
      const seq = await w.notify.drips.createSequence({
        name: 'positions',
        steps: [
          { delayMinutes: 0, subject: 'First', text: 'step {{ step.position }} of sequence {{ step.sequence_id }}' },
          { delayMinutes: 5, subject: 'Second', text: 'step {{ step.position }} of sequence {{ step.sequence_id }}' },
        ],
      });
      await w.notify.drips.enroll({ contact: 'ann@example.com', sequence: seq.id });
      await runDrips(w.notify.context);
      w.clock.advance(minutes(5));
      await runDrips(w.notify.context);

      const got = w.mailer.messages.map((m) => ({ subject: m.subject, feedback: m.headers['Feedback-ID'], listId: m.headers['List-Id'], text: m.text?.trim() }));
      assert.deepEqual(got, [
        { subject: 'First', feedback: `drip-${seq.id}-:acme`, listId: undefined, text: `step 1 of sequence ${seq.id}` },
        { subject: 'Second', feedback: `drip-${seq.id}-:acme`, listId: undefined, text: `step 2 of sequence ${seq.id}` },
      ]);
    });
  });
}
