import assert from 'node:assert/strict';
import { test } from 'node:test';
import { manualClock, minutes } from '../../src/core/clock.ts';
import type { Mailer } from '../../src/core/mailer.ts';
import { isNotifyError } from '../../src/errors.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { recordingLogger } from '../helpers/log-lines.ts';
import { holdingMailer, sendRows } from './helpers.ts';

/** A mailer that keeps the recipients it was handed; `fail` (when set) answers with that SMTP code instead. */
function recordingMailer(fail?: () => number | undefined) {
  const delivered: string[] = [];
  const mailer: Mailer = {
    name: 'recording',
    async send(m) {
      const code = fail?.();
      if (code !== undefined) throw Object.assign(new Error(`${code} try later`), { responseCode: code });
      delivered.push(m.to[0]);
      return { messageId: m.messageId };
    },
  };
  return { mailer, delivered };
}

async function seed(notify: Notify, list: string, n: number, status?: 'unsubscribed'): Promise<void> {
  for (let i = 0; i < n; i++) await notify.contacts.upsert({ email: `${list}${i}@example.com`, lists: [list], ...(status ? { status } : {}) });
}

forEachEngine('campaign run: what a run sends, counts and says', (h) => {
  test('an unknown campaign: NOT_FOUND naming it', async () => {
    const notify = await createNotify(testOptions(h.url));
    try {
      await assert.rejects(notify.campaigns.send(987654), (e) => isNotifyError(e) && e.code === 'NOT_FOUND' && e.message === 'Campaign 987654 not found' && e.details?.campaignId === 987654);
    } finally {
      await notify.close();
    }
  });

  test('batchSize below the chunk: each run sends exactly batchSize, progress expects that many, nobody twice', async () => {
    const rec = recordingMailer();
    const notify = await createNotify(testOptions(h.url, { mailer: rec.mailer, batchSize: 3 }));
    try {
      await seed(notify, 'bs', 8);
      const c = await notify.campaigns.create({ subject: 'Batch', text: 'hello', list: 'bs' });
      const progress: { expected: number; budget: number }[] = [];
      const first = await notify.campaigns.send(c.id, { onProgress: (p) => progress.push({ expected: p.expected, budget: p.budget }) });
      assert.equal(first.sent, 3);
      assert.equal(first.remaining, 5);
      assert.equal(rec.delivered.length, 3);
      assert.deepEqual(progress[0], { expected: 3, budget: 3 }, 'the first report: min(batchSize, unsent)');
      assert.equal((await notify.campaigns.send(c.id)).sent, 3);
      const last = await notify.campaigns.send(c.id);
      assert.deepEqual([last.sent, last.remaining, last.done], [2, 0, true]);
      assert.equal(new Set(rec.delivered).size, 8);
    } finally {
      await notify.close();
    }
  });

  test('deferred sends due again: a run retries at most batchSize of them', async () => {
    const clock = manualClock();
    let failing = true;
    const rec = recordingMailer(() => (failing ? 421 : undefined));
    const wide = await createNotify(testOptions(h.url, { mailer: rec.mailer, clock, batchSize: 50 }));
    const narrow = await createNotify(testOptions(h.url, { mailer: rec.mailer, clock, batchSize: 2 }));
    try {
      await seed(wide, 'df', 5);
      const c = await wide.campaigns.create({ subject: 'Deferred', text: 'hello', list: 'df' });
      const first = await wide.campaigns.send(c.id);
      assert.deepEqual([first.sent, first.deferred], [0, 5]);
      failing = false;
      clock.advance(minutes(2));
      const retry = await narrow.campaigns.send(c.id);
      assert.equal(retry.sent, 2, 'two of the five due retries');
      assert.equal(rec.delivered.length, 2);
      assert.equal((await sendRows(wide, c.id)).filter((r) => r.status === 'deferred').length, 3);
    } finally {
      await narrow.close();
      await wide.close();
    }
  });

  test('a transient failure on the last allowed attempt is failed, its error says so', async () => {
    const rec = recordingMailer(() => 421);
    const notify = await createNotify(testOptions(h.url, { mailer: rec.mailer, maxRetries: 1 }));
    try {
      await seed(notify, 'lr', 1);
      const c = await notify.campaigns.create({ subject: 'Last', text: 'hello', list: 'lr' });
      const r = await notify.campaigns.send(c.id);
      assert.deepEqual([r.failed, r.deferred], [1, 0]);
      const row = await notify.context.store.db.selectFrom('notify_sends').select(['status', 'error']).where('campaign_id', '=', c.id).executeTakeFirstOrThrow();
      assert.equal(row.status, 'failed');
      assert.match(String(row.error), /421 try later \(attempt 1 of 1; no more retries\)$/);
    } finally {
      await notify.close();
    }
  });

  test("a stale 'sending' row is reported in a warning naming it; a run with none warns nothing", async () => {
    const clock = manualClock();
    const { logger, lines } = recordingLogger();
    const notify = await createNotify(testOptions(h.url, { mailer: recordingMailer().mailer, clock, logger }));
    try {
      await seed(notify, 'st', 2);
      const c = await notify.campaigns.create({ subject: 'Stale', text: 'hello', list: 'st' });
      const contact = await notify.contacts.get('st0@example.com');
      const store = notify.context.store;
      const [row] = await store.sends.claim([{ token: 'stalestalestalestale01', campaign_id: c.id, contact_id: contact!.id, to_email: contact!.email, subject: 'Stale', status: 'sending' }], clock.now());
      await store.counters.add(new Map([[c.id, { total: 1 }]]));
      const warnings = () => lines.filter((l) => l.level === 40 && /left 'sending'/.test(String(l.msg)));
      await notify.campaigns.send(c.id);
      assert.equal(warnings().length, 0, 'nothing stale yet: no warning');
      clock.advance(minutes(31));
      const r = await notify.campaigns.send(c.id);
      assert.equal(r.interrupted, 1);
      assert.deepEqual(
        warnings().map((l) => ({ campaignId: l.campaignId, sends: l.sends, msg: l.msg })),
        [{ campaignId: c.id, sends: [row.id], msg: "1 sends left 'sending' by an interrupted run marked failed (not resent)" }],
      );
    } finally {
      await notify.close();
    }
  });

  test('a run reads at most 20 x batchSize audience members: suppressed ones past that wait for the next run', async () => {
    const rec = recordingMailer();
    const notify = await createNotify(testOptions(h.url, { mailer: rec.mailer, batchSize: 1 }));
    try {
      await seed(notify, 'sc', 25, 'unsubscribed');
      await notify.contacts.upsert({ email: 'live@example.com', lists: ['sc'] });
      const c = await notify.campaigns.create({ subject: 'Scan', text: 'hello', list: 'sc' });
      const first = await notify.campaigns.send(c.id);
      assert.deepEqual([first.sent, first.suppressed, first.done], [0, 20, false]);
      assert.equal(rec.delivered.length, 0);
      const second = await notify.campaigns.send(c.id);
      assert.deepEqual([second.sent, second.suppressed, second.done], [1, 5, true]);
      assert.deepEqual(rec.delivered, ['live@example.com']);
    } finally {
      await notify.close();
    }
  });

  test('a contact who leaves between the claim and the send is suppressed, not sent, and not spent from the batch', async () => {
    let notify!: Notify;
    const delivered: string[] = [];
    const mailer: Mailer = {
      name: 'leaving',
      concurrency: 1,
      async send(m) {
        // while the first message is out, the second member of the same chunk unsubscribes
        if (delivered.length === 0) await notify.contacts.upsert({ email: 'lv1@example.com', status: 'unsubscribed' });
        delivered.push(m.to[0]);
        return { messageId: m.messageId };
      },
    };
    notify = await createNotify(testOptions(h.url, { mailer, batchSize: 3 }));
    try {
      await seed(notify, 'lv', 5);
      const c = await notify.campaigns.create({ subject: 'Leaving', text: 'hello', list: 'lv' });
      const budgets: number[] = [];
      const r = await notify.campaigns.send(c.id, { onProgress: (p) => budgets.push(p.budget) });
      assert.equal(r.suppressed, 1);
      assert.equal(budgets.at(-1), 3 - r.sent, 'what the run may still send: batchSize less the sends made, the one who left not among them');
      const rest = await notify.campaigns.send(c.id);
      assert.equal(rest.done, true);
      assert.deepEqual(delivered, ['lv0@example.com', 'lv2@example.com', 'lv3@example.com', 'lv4@example.com']);
      assert.deepEqual(
        (await sendRows(notify, c.id)).map((row) => row.status),
        ['sent', 'suppressed', 'sent', 'sent', 'sent'],
      );
    } finally {
      await notify.close();
    }
  });

  test('paused mid-run: the chunk claimed ahead is given back, its suppressed members stay suppressed and are counted', async () => {
    const hold = holdingMailer(40);
    const notify = await createNotify(testOptions(h.url, { mailer: hold.mailer, batchSize: 1000 }));
    try {
      // one chunk of 100 to send, then a chunk (claimed while the first is sent) of 5 who unsubscribed and 3 more
      await seed(notify, 'gb', 100);
      for (let i = 0; i < 5; i++) await notify.contacts.upsert({ email: `gone${i}@example.com`, lists: ['gb'], status: 'unsubscribed' });
      for (let i = 0; i < 3; i++) await notify.contacts.upsert({ email: `gbl${i}@example.com`, lists: ['gb'] });
      const c = await notify.campaigns.create({ subject: 'Give back', text: 'hello', list: 'gb' });
      const run = notify.campaigns.send(c.id);
      await hold.held;
      setTimeout(hold.release, 300);
      await notify.campaigns.pause(c.id);
      const r = await run;
      assert.equal(r.status, 'paused');
      const rows = await sendRows(notify, c.id);
      assert.equal(rows.filter((row) => row.status === 'suppressed').length, 5, 'the chunk ahead was claimed before the pause');
      assert.equal(r.suppressed, 5);
      assert.equal(rows.filter((row) => row.status === 'sent').length, r.sent);
      assert.equal(rows.length, r.sent + 5, 'the claimed sends never handed over were given back');
    } finally {
      await notify.close();
    }
  });

  test('a finished run stops watching its campaign: no status reads after it returns', async () => {
    const notify = await createNotify(testOptions(h.url, { mailer: recordingMailer().mailer }));
    try {
      await seed(notify, 'wt', 2);
      const c = await notify.campaigns.create({ subject: 'Watch', text: 'hello', list: 'wt' });
      const campaigns = notify.context.store.campaigns;
      const statusOf = campaigns.statusOf;
      let reads = 0;
      campaigns.statusOf = (id) => {
        reads++;
        return statusOf.call(campaigns, id);
      };
      try {
        assert.equal((await notify.campaigns.send(c.id)).sent, 2);
        reads = 0;
        // the run's watch reads the status every 100 ms while it lasts
        await new Promise((r) => setTimeout(r, 450));
        assert.equal(reads, 0);
      } finally {
        campaigns.statusOf = statusOf;
      }
    } finally {
      await notify.close();
    }
  });
});
