import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { minutes } from '../../src/core/clock.ts';
import { newToken } from '../../src/core/tokens.ts';
import { ENGINES } from '../helpers/engines.ts';
import { dripWorld } from './helpers.ts';

const STEPS = [
  { delayMinutes: 0, subject: 'One', html: '<p>one</p>' },
  { delayMinutes: 60, subject: 'Two', html: '<p>two</p>' },
];

for (const engine of ENGINES) {
  describe(`drip group commit [${engine}]`, () => {
    test('one group settles each enrollment to its own state, under its own claim; one whose claim is not the one given stays as it was', async (t) => {
      const w = await dripWorld(engine);
      t.after(() => w.close());
      await w.notify.drips.createSequence({ name: 'welcome', steps: STEPS });
      for (const n of [1, 2, 3, 4, 5, 6]) {
        await w.notify.contacts.upsert({ email: `r${n}@example.com` });
        await w.notify.drips.enroll({ contact: `r${n}@example.com`, sequence: 'welcome' });
      }
      const store = w.notify.context.store;
      const [first, second] = [newToken(), newToken()];
      const a = await store.enrollments.claimDue(w.clock.now(), 3, first);
      const b = await store.enrollments.claimDue(w.clock.now(), 3, second);
      assert.deepEqual([a.length, b.length], [3, 3]);
      const now = w.clock.now();
      const next = now + minutes(60);
      const settlements = [
        // the common case: two steps sent at the same moment, both on to the same next step
        { id: a[0].id, status: 'active' as const, step_index: 1, next_send_at: next, attempts: 0, last_error: null, claim_token: first },
        { id: a[1].id, status: 'active' as const, step_index: 1, next_send_at: next, attempts: 0, last_error: null, claim_token: first },
        // a retry: same step, an attempt counted, the error kept
        { id: a[2].id, status: 'active' as const, step_index: 0, next_send_at: now + minutes(5), attempts: 1, last_error: '421 busy', claim_token: first },
        // the same state as the first two, under the other claim
        { id: b[0].id, status: 'active' as const, step_index: 1, next_send_at: next, attempts: 0, last_error: null, claim_token: second },
        // the same again but for an error whose text is the word null: a state of its own
        { id: b[2].id, status: 'active' as const, step_index: 1, next_send_at: next, attempts: 0, last_error: 'null', claim_token: second },
        // a claim this enrollment is not held under: nothing changes
        { id: b[1].id, status: 'completed' as const, step_index: 2, next_send_at: null, attempts: 0, last_error: null, claim_token: first },
      ];
      const { settled } = await store.enrollments.writeStepGroup({ outcomes: [], settlements }, now);
      assert.deepEqual([...settled].sort((x, y) => x - y), [a[0].id, a[1].id, a[2].id, b[0].id, b[2].id].sort((x, y) => x - y));
      const state = async (id: number) => {
        const e = (await w.notify.drips.getEnrollment(id))!;
        return { status: e.status, step_index: e.step_index, next_send_at: e.next_send_at?.getTime() ?? null, attempts: e.attempts, last_error: e.last_error };
      };
      assert.deepEqual(await state(a[0].id), { status: 'active', step_index: 1, next_send_at: next, attempts: 0, last_error: null });
      assert.deepEqual(await state(a[1].id), { status: 'active', step_index: 1, next_send_at: next, attempts: 0, last_error: null });
      assert.deepEqual(await state(a[2].id), { status: 'active', step_index: 0, next_send_at: now + minutes(5), attempts: 1, last_error: '421 busy' });
      assert.deepEqual(await state(b[0].id), { status: 'active', step_index: 1, next_send_at: next, attempts: 0, last_error: null });
      assert.deepEqual(await state(b[2].id), { status: 'active', step_index: 1, next_send_at: next, attempts: 0, last_error: 'null' });
      assert.equal((await state(b[1].id)).status, 'processing', 'still held by the run that claimed it');
    });

    test('a database without notify_step_group (not migrated to 023 yet): the run writes its groups as one statement of its own', { skip: engine !== 'postgres' && 'a PostgreSQL function' }, async (t) => {
      const w = await dripWorld(engine);
      t.after(() => w.close());
      await sql`drop function notify_step_group`.execute(w.notify.context.store.db);
      await w.notify.drips.createSequence({ name: 'welcome', steps: STEPS });
      for (const n of [1, 2, 3]) await w.notify.drips.enroll({ contact: (await w.notify.contacts.upsert({ email: `u${n}@example.com` })).email, sequence: 'welcome' });
      const run = await w.notify.drips.process();
      assert.deepEqual([run.sent, run.failed], [3, 0]);
      const rows = await w.notify.context.store.db.selectFrom('notify_enrollments').select(['status', 'step_index']).execute();
      assert.deepEqual(
        rows.map((r) => [r.status, Number(r.step_index)]),
        [
          ['active', 1],
          ['active', 1],
          ['active', 1],
        ],
      );
      assert.equal(w.mailer.messages.length, 3);
    });
  });
}
