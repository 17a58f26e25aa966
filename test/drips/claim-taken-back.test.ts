import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { minutes } from '../../src/core/clock.ts';
import { runDrips } from '../../src/core/drip-run.ts';
import { newToken } from '../../src/core/tokens.ts';
import type { Mailer } from '../../src/mail/contract.ts';
import { ENGINES } from '../helpers/engines.ts';
import { type DripWorld, dripWorld } from './helpers.ts';

// A run whose claim was taken back while its mailer was busy (reclaimed as stale by another run)
// writes the step's outcome but not the enrollment's move, and reports nothing about it: the run
// that holds the claim now decides.
for (const engine of ENGINES) {
  describe(`a drip claim taken back during delivery [${engine}]`, () => {
    for (const maxRetries of [1, 3]) {
      test(`a failed attempt (maxRetries ${maxRetries}): no notify_enrollment_failed, not counted, the enrollment left to the new claim`, async (t) => {
        const world: { w?: DripWorld } = {};
        const taken: string[] = [];
        // the mail server hangs past staleLockMinutes; meanwhile another run reclaims and claims the enrollment
        const slow: Mailer = {
          name: 'slow',
          async send() {
            const { notify, clock } = world.w!;
            clock.advance(minutes(31));
            await notify.context.store.enrollments.reclaimStale(clock.now() - minutes(30), clock.now());
            const token = newToken();
            if ((await notify.context.store.enrollments.claimDue(clock.now(), 10, token)).length > 0) taken.push(token);
            return false;
          },
        };
        const w = await dripWorld(engine, { mailer: slow, maxRetries });
        world.w = w;
        t.after(() => w.close());
        const failed: unknown[] = [];
        w.notify.on('notify_enrollment_failed', (p) => {
          failed.push(p);
        });
        await w.notify.contacts.upsert({ email: 'ann@example.com' });
        await w.notify.drips.createSequence({ name: 'hang', steps: [{ delayMinutes: 0, subject: 'One', text: 'one' }] });
        const e = await w.notify.drips.enroll({ contact: 'ann@example.com', sequence: 'hang' });

        const r = await runDrips(w.notify.context);
        assert.equal(taken.length, 1, 'the other run got the claim');
        assert.deepEqual({ claimed: r.claimed, sent: r.sent, failed: r.failed, retried: r.retried }, { claimed: 1, sent: 0, failed: 0, retried: 0 });
        assert.deepEqual(failed, [], 'no failure event for an enrollment this run no longer holds');
        const now = (await w.notify.drips.getEnrollment(e.id))!;
        assert.deepEqual({ status: now.status, step_index: now.step_index, attempts: now.attempts, last_error: now.last_error }, { status: 'processing', step_index: 0, attempts: 0, last_error: null });
        const rows = await w.notify.context.store.db.selectFrom('notify_sends').select(['status', 'error']).where('enrollment_id', '=', e.id).execute();
        // the attempt itself is recorded, by the rule of a failed step: waiting for a retry while any is left
        const expected = maxRetries > 1 ? { status: 'deferred', error: 'mailer returned false' } : { status: 'failed', error: 'mailer returned false (attempt 1 of 1; no more retries)' };
        assert.deepEqual(rows, [expected], 'the attempt itself is recorded');
      });
    }

    test('steps still waiting for a pool slot when the claim goes are not sent by this run', async (t) => {
      const world: { w?: DripWorld } = {};
      const delivered: string[] = [];
      let stolen: Promise<unknown[]> | undefined;
      // the first delivery outlasts staleLockMinutes and another run takes back every claim; no slot is freed
      // before that (each delivery waits for it), so the sixth step (five slots) is still waiting to start
      const slow: Mailer = {
        name: 'slow',
        async send(message) {
          stolen ??= (async () => {
            const { notify, clock } = world.w!;
            clock.advance(minutes(31));
            await notify.context.store.enrollments.reclaimStale(clock.now() - minutes(30), clock.now());
            return notify.context.store.enrollments.claimDue(clock.now(), 10, newToken());
          })();
          await stolen;
          delivered.push(message.to[0]);
          return { messageId: `<${message.sendToken}@test>` };
        },
      };
      const w = await dripWorld(engine, { mailer: slow });
      world.w = w;
      t.after(() => w.close());
      await w.notify.drips.createSequence({ name: 'six', steps: [{ delayMinutes: 0, subject: 'One', text: 'one' }] });
      const emails = ['a', 'b', 'c', 'd', 'e', 'f'].map((n) => `${n}@example.com`);
      for (const email of emails) {
        await w.notify.contacts.upsert({ email });
        await w.notify.drips.enroll({ contact: email, sequence: 'six' });
      }

      await runDrips(w.notify.context);
      assert.equal((await stolen!).length, 6, 'the other run holds all six claims');
      assert.ok(delivered.length >= 1 && delivered.length <= 5, `only steps started before the claims went are delivered (${delivered.length})`);
      const rows = await w.notify.context.store.db.selectFrom('notify_sends').select(['to_email', 'status']).execute();
      const waiting = rows.filter((r) => !delivered.includes(r.to_email));
      assert.ok(waiting.length >= 1);
      assert.deepEqual(
        waiting.map((r) => r.status),
        waiting.map(() => 'queued'),
        'a step never started stays queued for the run that holds its claim',
      );
    });
  });
}
