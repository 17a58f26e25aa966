import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { minutes } from '../../src/core/clock.ts';
import { runDrips } from '../../src/core/drip-run.ts';
import { newToken } from '../../src/core/tokens.ts';
import type { SendStatus } from '../../src/core/types.ts';
import { ENGINES } from '../helpers/engines.ts';
import { dripWorld } from './helpers.ts';

/**
 * Several reclaimed steps in one chunk, each with the row an earlier (crashed) run left: each is
 * decided by its own row, not by a neighbour's (the rows are looked up together, by enrollment and step).
 */
for (const engine of ENGINES) {
  describe(`reclaimed steps of one chunk, each with its own row [${engine}]`, () => {
    test('sent: advanced without a message; queued: sent once under its row; cancelled: the enrollment cancelled', async (t) => {
      const w = await dripWorld(engine);
      t.after(() => w.close());
      const seq = await w.notify.drips.createSequence({
        name: 'welcome',
        steps: [
          { delayMinutes: 10, subject: 'One', text: 'one' },
          { delayMinutes: 60, subject: 'Two', text: 'two' },
        ],
      });
      const rowStatus: Record<string, SendStatus> = { 'ann@example.com': 'sent', 'bob@example.com': 'queued', 'cid@example.com': 'cancelled' };
      const enrolled = new Map<string, number>();
      for (const email of Object.keys(rowStatus)) {
        await w.notify.contacts.upsert({ email });
        enrolled.set(email, (await w.notify.drips.enroll({ contact: email, sequence: seq.id })).id);
      }
      w.clock.advance(minutes(10));
      // a run claimed the three steps, wrote their rows, got each to a different point and crashed
      const store = w.notify.context.store;
      const claimed = await store.enrollments.claimDue(w.clock.now(), 10, newToken());
      assert.equal(claimed.length, 3);
      const rows = await store.sends.claimSteps(
        claimed.map((e) => ({ token: newToken(), enrollment_id: e.id, step_id: seq.steps[0].id, step_index: 0, contact_id: e.contact_id, to_email: [...enrolled].find(([, id]) => id === e.id)![0], subject: 'One', status: 'queued' as const })),
        w.clock.now(),
      );
      const rowOf = new Map(rows.map((r) => [r.to_email, r]));
      for (const [email, status] of Object.entries(rowStatus)) await store.db.updateTable('notify_sends').set({ status }).where('id', '=', rowOf.get(email)!.id).execute();
      w.clock.advance(minutes(31));

      const r = await runDrips(w.notify.context);
      assert.deepEqual({ reclaimed: r.reclaimed, claimed: r.claimed, sent: r.sent, advanced: r.advanced, cancelled: r.cancelled }, { reclaimed: 3, claimed: 3, sent: 1, advanced: 1, cancelled: 1 });
      assert.deepEqual(
        w.mailer.messages.map((m) => [m.to[0], m.subject, m.sendToken]),
        [['bob@example.com', 'One', rowOf.get('bob@example.com')!.token]],
        "only Bob's queued step leaves, under his row",
      );
      const states = [];
      for (const [email, id] of enrolled) {
        const e = (await w.notify.drips.getEnrollment(id))!;
        states.push([email, e.status, e.step_index]);
      }
      assert.deepEqual(states, [
        ['ann@example.com', 'active', 1],
        ['bob@example.com', 'active', 1],
        ['cid@example.com', 'cancelled', 0],
      ]);
      const statuses = await store.db.selectFrom('notify_sends').select(['to_email', 'status']).where('enrollment_id', 'is not', null).orderBy('to_email').execute();
      assert.deepEqual(
        statuses.map((s) => [s.to_email, s.status]),
        [
          ['ann@example.com', 'sent'],
          ['bob@example.com', 'sent'],
          ['cid@example.com', 'cancelled'],
        ],
      );
    });
  });
}
