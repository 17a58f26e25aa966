import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { manualClock, minutes } from '../../src/core/clock.ts';
import type { Mailer } from '../../src/mail/contract.ts';
import { createNotify, type CreateNotifyOptions, type Notify } from '../../src/notify.ts';
import { createStore } from '../../src/store/index.ts';
import { ENGINES, type Engine, freshDatabaseUrl, testOptions } from '../helpers/engines.ts';
import { sendRows } from './helpers.ts';

// A segment campaign's audience is who matches the segment when their message is handed to the
// mail server, as for a list (README "Lists and segments"): the segment is applied when a run reads
// the next chunk AND again in the write that marks a claimed send `sending`, so a contact whose
// attributes stop matching while their send waits in the chunk (throttled: up to a minute; paced:
// longer) or waits `deferred` for a retry is not sent it; the row is `suppressed` and counted so.

const PEOPLE = ['ann@example.com', 'bob@example.com', 'cat@example.com'];
const PRO = { attr: 'plan', eq: 'pro' } as const;
const HOOK = { webhooksOut: [{ url: 'http://127.0.0.1:9/hook', secret: 'a-secret-of-enough-length', events: ['notify:email.sent'] }] };

async function world(engine: Engine, mailer: Mailer, extra: CreateNotifyOptions = {}) {
  const db = freshDatabaseUrl(engine);
  const notify = await createNotify(testOptions(db.url, { mailer, ...extra }));
  for (const email of PEOPLE) await notify.contacts.upsert({ email, lists: ['news'], attributes: { plan: 'pro' } });
  return {
    notify,
    async close() {
      await notify.close();
      if (engine === 'postgres') await createStore(db.url).dialect.destroyData();
      db.cleanup();
    },
  };
}

/** delivers at once; after Ann's message, runs `then` (Bob's send is still queued in the chunk) */
function afterAnn(then: () => Promise<unknown>) {
  const delivered: string[] = [];
  const mailer: Mailer = {
    name: 'after-ann',
    async send(m) {
      delivered.push(m.to[0]);
      if (m.to[0] === 'ann@example.com') await then();
      return { messageId: `<${m.sendToken}@test>` };
    },
  };
  return { mailer, delivered };
}

const downgrade = (notify: Notify) => notify.contacts.upsert({ email: 'bob@example.com', attributes: { plan: 'free' } });

for (const engine of ENGINES) {
  describe(`a segment campaign re-checks the segment as each send starts [${engine}]`, () => {
    for (const [label, extra] of [
      ['', {}],
      [' (outcomes written with their events: an endpoint wants notify:email.sent)', HOOK],
    ] as const) {
      test(`a contact who stops matching while their send waits in the chunk is not sent it${label}`, async (t) => {
        const box: { notify?: Notify } = {};
        const { mailer, delivered } = afterAnn(async () => box.notify && downgrade(box.notify));
        // a throttle leaves one pool slot: Bob's send waits queued while Ann's is delivered
        const w = await world(engine, mailer, { throttleMs: 5, ...extra });
        t.after(() => w.close());
        const c = await w.notify.campaigns.create({ subject: 'Pro news', text: 'Hi', list: 'news', segment: PRO });
        box.notify = w.notify;
        const r = await w.notify.campaigns.send(c.id);
        assert.deepEqual([r.sent, r.failed, r.suppressed, r.done], [2, 0, 1, true]);
        assert.deepEqual(delivered, ['ann@example.com', 'cat@example.com'], 'Bob is not sent it');
        assert.deepEqual(
          (await sendRows(w.notify, c.id)).map((s) => [s.to_email, s.status]),
          [
            ['ann@example.com', 'sent'],
            ['bob@example.com', 'suppressed'],
            ['cat@example.com', 'sent'],
          ],
        );
        const report = await w.notify.campaigns.getCampaignReport(c.id);
        assert.deepEqual([report.stats.total, report.stats.sent, report.suppressed], [3, 2, 1]);
        assert.equal((await w.notify.contacts.get('bob@example.com'))?.status, 'subscribed', 'still subscribed: only out of the segment');
      });
    }

    test('a { list } segment: a contact who leaves that list while their send waits is not sent it', async (t) => {
      const box: { notify?: Notify } = {};
      const { mailer, delivered } = afterAnn(async () => box.notify?.contacts.unsubscribe('bob@example.com', 'vip'));
      const w = await world(engine, mailer, { throttleMs: 5 });
      t.after(() => w.close());
      await w.notify.lists.create({ name: 'vip' });
      for (const email of PEOPLE) await w.notify.contacts.subscribe(email, 'vip');
      const c = await w.notify.campaigns.create({ subject: 'VIP news', text: 'Hi', list: 'news', segment: { all: [PRO, { list: 'vip' }] } });
      box.notify = w.notify;
      const r = await w.notify.campaigns.send(c.id);
      assert.deepEqual([r.sent, r.suppressed], [2, 1]);
      assert.deepEqual(delivered, ['ann@example.com', 'cat@example.com']);
    });

    test('a segment of every kind of filter: the check at the start binds each value in its place', async (t) => {
      const box: { notify?: Notify } = {};
      // only the last value of the segment stops matching for Bob: a parameter out of place would suppress the others or send Bob
      const { mailer, delivered } = afterAnn(async () => box.notify?.contacts.upsert({ email: 'bob@example.com', attributes: { plan: 'team', age: 41, tags: ['vip'], city: 'Bergen' } }));
      const w = await world(engine, mailer, { throttleMs: 5 });
      t.after(() => w.close());
      await w.notify.lists.create({ name: 'vip' });
      for (const email of PEOPLE) {
        await w.notify.contacts.upsert({ email, attributes: { plan: 'team', age: 41, tags: ['vip'], city: 'Oslo' } });
        await w.notify.contacts.subscribe(email, 'VIP');
      }
      const other = await w.notify.campaigns.create({ subject: 'Other', text: 'Hi', list: 'news' });
      const segment = {
        all: [
          { attr: 'plan', in: ['pro', 'team'] },
          { attr: 'age', gt: 30 },
          { attr: 'age', lt: 100 },
          { attr: 'tags', contains: 'vip' },
          { attr: 'nickname', exists: false },
          { attr: 'plan', ne: 'free' },
          { list: 'vip' },
          { not: { opened: other.id, humanOnly: true } },
          { any: [{ not: { clicked: other.id } }, { createdBefore: '2000-01-01T00:00:00Z' }] },
          { createdAfter: '2000-01-01T00:00:00Z' },
          { attr: 'city', eq: 'Oslo' },
        ],
      };
      const c = await w.notify.campaigns.create({ subject: 'Team news', text: 'Hi', list: 'news', segment });
      box.notify = w.notify;
      const r = await w.notify.campaigns.send(c.id);
      assert.deepEqual([r.sent, r.suppressed, r.done], [2, 1, true]);
      assert.deepEqual(delivered, ['ann@example.com', 'cat@example.com']);
    });

    test('a contact still matching (another attribute changed) is sent it', async (t) => {
      const box: { notify?: Notify } = {};
      const { mailer, delivered } = afterAnn(async () => box.notify?.contacts.upsert({ email: 'bob@example.com', attributes: { plan: 'pro', city: 'Oslo' } }));
      const w = await world(engine, mailer, { throttleMs: 5 });
      t.after(() => w.close());
      const c = await w.notify.campaigns.create({ subject: 'Pro news', text: 'Hi', list: 'news', segment: PRO });
      box.notify = w.notify;
      const r = await w.notify.campaigns.send(c.id);
      assert.deepEqual([r.sent, r.suppressed], [3, 0]);
      assert.deepEqual(delivered, PEOPLE);
    });

    test('a contact who starts matching during the run is sent it once: by this run when read after, else by the next', async (t) => {
      const box: { notify?: Notify } = {};
      const upgrade = (email: string) => box.notify!.contacts.upsert({ email, attributes: { plan: 'pro' } });
      const { mailer, delivered } = afterAnn(async () => Promise.all([upgrade('bob@example.com'), upgrade('dan@example.com')]));
      const w = await world(engine, mailer, { throttleMs: 5 });
      t.after(() => w.close());
      // Bob (before the chunk's cursor) and Dan (after it) do not match when the audience is read
      await w.notify.contacts.upsert({ email: 'bob@example.com', attributes: { plan: 'free' } });
      await w.notify.contacts.upsert({ email: 'dan@example.com', lists: ['news'], attributes: { plan: 'free' } });
      const c = await w.notify.campaigns.create({ subject: 'Pro news', text: 'Hi', list: 'news', segment: PRO });
      box.notify = w.notify;
      const first = await w.notify.campaigns.send(c.id);
      assert.deepEqual([first.sent, first.suppressed, first.remaining, first.done], [3, 0, 1, false], 'Dan read with the next chunk; Bob still to send');
      const second = await w.notify.campaigns.send(c.id);
      assert.deepEqual([second.sent, second.remaining, second.done], [1, 0, true]);
      assert.deepEqual(delivered, ['ann@example.com', 'cat@example.com', 'dan@example.com', 'bob@example.com']);
    });

    test('a deferred send whose contact stopped matching before the retry is suppressed, not retried', async (t) => {
      const clock = manualClock(Date.UTC(2026, 4, 1, 9));
      const delivered: string[] = [];
      let refusals = 1;
      const mailer: Mailer = {
        name: 'busy-once',
        async send(m) {
          if (m.to[0] === 'bob@example.com' && refusals-- > 0) throw Object.assign(new Error('421 4.7.0 Try again later'), { responseCode: 421 });
          delivered.push(m.to[0]);
          return { messageId: `<${m.sendToken}@test>` };
        },
      };
      const w = await world(engine, mailer, { clock, maxRetries: 3 });
      t.after(() => w.close());
      const c = await w.notify.campaigns.create({ subject: 'Pro news', text: 'Hi', list: 'news', segment: PRO });
      const first = await w.notify.campaigns.send(c.id);
      assert.deepEqual([first.sent, first.deferred, first.waiting], [2, 1, 1]);
      await downgrade(w.notify);
      clock.advance(minutes(1));
      const retry = await w.notify.campaigns.send(c.id);
      assert.deepEqual([retry.sent, retry.suppressed, retry.waiting, retry.done], [0, 1, 0, true]);
      assert.deepEqual(delivered, ['ann@example.com', 'cat@example.com']);
      assert.equal((await sendRows(w.notify, c.id)).find((s) => s.to_email === 'bob@example.com')?.status, 'suppressed');
    });

    test('scheduled, then a contact stops matching before the run: the audience is read at the run, not at schedule', async (t) => {
      const { mailer, delivered } = afterAnn(async () => {});
      const clock = manualClock(Date.UTC(2026, 4, 1, 9));
      const w = await world(engine, mailer, { clock });
      t.after(() => w.close());
      const c = await w.notify.campaigns.create({ subject: 'Pro news', text: 'Hi', list: 'news', segment: PRO });
      await w.notify.campaigns.schedule(c.id, new Date(clock.now() + minutes(10)));
      assert.deepEqual(await w.notify.campaigns.audience(c.id), { count: 3 });
      await downgrade(w.notify);
      assert.deepEqual(await w.notify.campaigns.audience(c.id), { count: 2 });
      clock.advance(minutes(10));
      const r = await w.notify.campaigns.send(c.id);
      assert.deepEqual([r.sent, r.suppressed, r.done], [2, 0, true]);
      assert.deepEqual(delivered, ['ann@example.com', 'cat@example.com']);
    });
  });
}
