import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runDrips } from '../../src/core/drip-run.ts';
import { ENGINES } from '../helpers/engines.ts';
import type { SequenceInput } from '../../src/core/drips.ts';
import { type DripWorld, dripWorld } from './helpers.ts';

/** the sequence created and every address a contact enrolled in it */
async function enrolAll(w: DripWorld, sequence: SequenceInput, emails: string[]) {
  await w.notify.drips.createSequence(sequence);
  const enrolments = [];
  for (const email of emails) {
    await w.notify.contacts.upsert({ email });
    enrolments.push(await w.notify.drips.enroll({ contact: email, sequence: sequence.name }));
  }
  return enrolments;
}

// A run claims its next chunk while the last outcomes of the one before still wait for their
// group commit. What those outcomes make due at once (a next step with no delay) is still sent by
// the same run, each step once, and nothing is left `processing`.
for (const engine of ENGINES) {
  describe(`the chunks of one drip run [${engine}]`, () => {
    test('a next step due at once is sent by the same run, every step once, over several chunks', async (t) => {
      const w = await dripWorld(engine);
      t.after(() => w.close());
      const emails = ['a', 'b', 'c', 'd', 'e'].map((n) => `${n}@example.com`);
      const steps = ['One', 'Two'].map((subject) => ({ delayMinutes: 0, subject, text: subject }));
      const enrolments = await enrolAll(w, { name: 'two', steps }, emails);

      const r = await runDrips(w.notify.context, { chunkSize: 2 });
      assert.deepEqual({ claimed: r.claimed, sent: r.sent, failed: r.failed }, { claimed: 10, sent: 10, failed: 0 });
      const got = w.mailer.messages.map((m) => `${m.to[0]} ${m.subject}`).sort();
      assert.deepEqual(got, emails.flatMap((e) => [`${e} One`, `${e} Two`]).sort(), 'each step of each contact once');
      const statuses = await Promise.all(enrolments.map(async (e) => (await w.notify.drips.getEnrollment(e.id))?.status));
      assert.deepEqual(statuses, emails.map(() => 'completed'));

      const again = await runDrips(w.notify.context, { chunkSize: 2 });
      assert.deepEqual({ claimed: again.claimed, sent: again.sent }, { claimed: 0, sent: 0 });
    });

    test('a batchSize smaller than what is due stops the run there; the rest waits for the next run', async (t) => {
      const w = await dripWorld(engine, { batchSize: 3 });
      t.after(() => w.close());
      await enrolAll(w, { name: 'one', steps: [{ delayMinutes: 0, subject: 'One', text: 'one' }] }, ['a', 'b', 'c', 'd', 'e'].map((n) => `${n}@example.com`));
      const first = await runDrips(w.notify.context, { chunkSize: 2 });
      assert.deepEqual({ claimed: first.claimed, sent: first.sent }, { claimed: 3, sent: 3 });
      const second = await runDrips(w.notify.context, { chunkSize: 2 });
      assert.deepEqual({ claimed: second.claimed, sent: second.sent }, { claimed: 2, sent: 2 });
      assert.equal(new Set(w.mailer.messages.map((m) => m.to[0])).size, 5);
      assert.equal(w.mailer.messages.length, 5);
    });
  });
}
