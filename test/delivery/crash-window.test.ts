import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import type { Mailer } from '../../src/core/mailer.ts';
import { createNotify } from '../../src/notify.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';

/** fewer than one claimed chunk (100), so every row is claimed at once */
const PEOPLE = 60;
const ACCEPTED = 12;
/** the delivery pool: sends in flight at once */
const POOL = 5;

/** A mailer that accepts ACCEPTED messages, then holds every further one until release(). */
function stallingMailer() {
  const state = { delivered: 0, calls: 0 };
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  const mailer: Mailer = {
    name: 'stalling',
    async send(m) {
      if (++state.calls > ACCEPTED) await gate;
      state.delivered++;
      return { messageId: m.messageId };
    },
  };
  return { mailer, state, release };
}

/**
 * What a crash at this moment would leave: the rows' statuses while the mail server holds the sends
 * in flight. Only the sends the mailer has (one per pool slot) may be `sending` (in doubt); those
 * it answered are recorded; the rest of the claimed chunk is `queued` (never handed over, safe to send).
 */
forEachEngine('a crash leaves in doubt only the sends in flight', (h) => {
  test(`mailer stalled after ${ACCEPTED} messages: ${POOL} rows sending, ${ACCEPTED} sent, the rest queued`, async () => {
    const stall = stallingMailer();
    const notify = await createNotify(testOptions(h.url, { mailer: stall.mailer, batchSize: 1000 }));
    try {
      for (let i = 0; i < PEOPLE; i++) await notify.contacts.upsert({ email: `w${i}@example.com`, lists: ['window'] });
      const c = await notify.campaigns.create({ subject: 'Window', text: 'hi', list: 'window' });
      const run = notify.campaigns.send(c.id);
      const statuses = async () => {
        const rows = await notify.context.store.db.selectFrom('notify_sends').select('status').where('campaign_id', '=', c.id).execute();
        const counts: Record<string, number> = {};
        for (const r of rows) counts[r.status] = (counts[r.status] ?? 0) + 1;
        return counts;
      };
      for (const end = Date.now() + 10_000; stall.state.calls < ACCEPTED + POOL && Date.now() < end; ) await sleep(10);
      assert.equal(stall.state.calls, ACCEPTED + POOL, 'every slot of the pool holds a send');
      // nothing else can happen now: every slot waits for the mailer; give the last group write time to land
      let now: Record<string, number> = {};
      for (const end = Date.now() + 5_000; Date.now() < end; await sleep(20)) {
        now = await statuses();
        if (now.sent === ACCEPTED) break;
      }
      assert.deepEqual(now, { sent: ACCEPTED, sending: POOL, queued: PEOPLE - ACCEPTED - POOL });
      assert.equal((await notify.campaigns.getCampaignStats(c.id)).sent, ACCEPTED, 'the counters move with the rows');

      stall.release();
      const result = await run;
      assert.deepEqual([result.sent, result.failed, result.done], [PEOPLE, 0, true]);
      assert.deepEqual(await statuses(), { sent: PEOPLE });
      assert.equal(stall.state.delivered, PEOPLE);
    } finally {
      await notify.close();
    }
  });
});
