import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Mailer } from '../../src/mail/contract.ts';
import { createNotify, type CreateNotifyOptions, type Notify } from '../../src/notify.ts';
import { createStore } from '../../src/store/index.ts';
import { unsubscribingMailer } from '../drips/helpers.ts';
import { ENGINES, type Engine, freshDatabaseUrl, testOptions } from '../helpers/engines.ts';

// A run claims its sends a chunk at a time (`queued`) and marks each `sending` as a pool slot hands
// it to the mail server: a contact who unsubscribes while their send waits in the chunk is not
// sent it. The row is `suppressed` and counted so, as a suppression at claim time is.

const PEOPLE = ['ann@example.com', 'bob@example.com', 'cat@example.com'];

async function world(engine: Engine, via: ((n: Notify) => Promise<string>) | undefined, extra: CreateNotifyOptions) {
  const db = freshDatabaseUrl(engine);
  const box: { w?: { notify: Notify } } = {};
  const { mailer, sent } = unsubscribingMailer(box, 'ann@example.com', 'bob@example.com', via && (() => via(box.w!.notify)));
  // a throttle leaves one pool slot: Bob's send waits queued while Ann's is delivered
  const notify = await createNotify(testOptions(db.url, { mailer, throttleMs: 5, ...extra }));
  for (const email of PEOPLE) await notify.contacts.upsert({ email, lists: ['news', 'other'] });
  return {
    notify,
    sent,
    arm: () => {
      box.w = { notify };
    },
    async close() {
      await notify.close();
      if (engine === 'postgres') await createStore(db.url).dialect.destroyData();
      db.cleanup();
    },
  };
}

async function rows(notify: Notify, campaignId: number) {
  const r = await notify.context.store.db.selectFrom('notify_sends').select(['to_email', 'status', 'attempts']).where('campaign_id', '=', campaignId).orderBy('id').execute();
  return r.map((x) => [x.to_email, x.status, Number(x.attempts)]);
}

async function sendAndCheck(w: Awaited<ReturnType<typeof world>>) {
  const c = await w.notify.campaigns.create({ subject: 'News', text: 'Hi', list: 'news' });
  w.arm();
  const from = w.sent.length;
  const r = await w.notify.campaigns.send(c.id);
  assert.deepEqual({ sent: r.sent, failed: r.failed, suppressed: r.suppressed, done: r.done }, { sent: 2, failed: 0, suppressed: 1, done: true });
  assert.deepEqual(
    w.sent.slice(from).map((m) => m.to[0]),
    ['ann@example.com', 'cat@example.com'],
    'Bob is not sent it',
  );
  assert.deepEqual(await rows(w.notify, c.id), [
    ['ann@example.com', 'sent', 1],
    ['bob@example.com', 'suppressed', 0],
    ['cat@example.com', 'sent', 1],
  ]);
  const report = await w.notify.campaigns.getCampaignReport(c.id);
  assert.deepEqual([report.stats.total, report.stats.sent, report.stats.failed, report.suppressed], [3, 2, 0, 1]);
  assert.equal((await w.notify.campaigns.get(c.id))?.status, 'sent');
  const again = await w.notify.campaigns.send(c.id);
  assert.equal(again.sent, 0);
  assert.equal(w.sent.length, from + 2, 'nothing more sent');
}

for (const engine of ENGINES) {
  describe(`a contact unsubscribed while their campaign send waits in the run's chunk [${engine}]`, () => {
    test('one-click from everything: not delivered, the row suppressed and counted so', async (t) => {
      const w = await world(engine, undefined, {});
      t.after(() => w.close());
      await sendAndCheck(w);
      assert.equal((await w.notify.contacts.get('bob@example.com'))?.status, 'unsubscribed');
    });

    test('the same with notify:email.sent wanted by an endpoint (the outcomes written with their events)', async (t) => {
      const w = await world(engine, undefined, { webhooksOut: [{ url: 'http://127.0.0.1:9/hook', secret: 'a-secret-of-enough-length', events: ['notify:email.sent'] }] });
      t.after(() => w.close());
      await sendAndCheck(w);
      const events = await w.notify.context.store.db.selectFrom('notify_outbound_events').select(['type']).where('type', '=', 'notify:email.sent').execute();
      assert.equal(events.length, 2, 'Ann and Cat only');
    });

    test("unsubscribeScope 'list': one-click from an earlier campaign of the list leaves that list only, and this send is not delivered", async (t) => {
      // Bob's link of last week's newsletter to the same list
      const w = await world(engine, async (notify) => (await notify.context.store.db.selectFrom('notify_sends').select('token').where('to_email', '=', 'bob@example.com').orderBy('id').executeTakeFirstOrThrow()).token, {
        unsubscribeScope: 'list',
      });
      t.after(() => w.close());
      const before = await w.notify.campaigns.create({ subject: 'Last week', text: 'Hi', list: 'news' });
      assert.equal((await w.notify.campaigns.send(before.id)).sent, 3);
      await sendAndCheck(w);
      const bob = await w.notify.contacts.get('bob@example.com');
      assert.deepEqual([bob?.status, bob?.lists], ['subscribed', ['other']], 'still subscribed, to the other list');
    });
  });
}

for (const engine of ENGINES) {
  describe(`other ways a contact leaves while their campaign send waits in the chunk [${engine}]`, () => {
    for (const [how, leave] of [
      ['erased', (n: Notify) => n.contacts.erase('bob@example.com')],
      ['marked bounced through the API', (n: Notify) => n.contacts.upsert({ email: 'bob@example.com', status: 'bounced' })],
      ['left the list through the API', (n: Notify) => n.contacts.unsubscribe('bob@example.com', 'news')],
    ] as const) {
      test(`${how}: not delivered, counted suppressed`, async (t) => {
        const db = freshDatabaseUrl(engine);
        const delivered: string[] = [];
        const box: { notify?: Notify } = {};
        const mailer: Mailer = {
          name: 'leaving',
          async send(m) {
            delivered.push(m.to[0]);
            if (m.to[0] === 'ann@example.com' && box.notify) await leave(box.notify);
            return { messageId: `<${m.sendToken}@test>` };
          },
        };
        const notify = await createNotify(testOptions(db.url, { throttleMs: 5, mailer }));
        t.after(async () => {
          await notify.close();
          if (engine === 'postgres') await createStore(db.url).dialect.destroyData();
          db.cleanup();
        });
        for (const email of PEOPLE) await notify.contacts.upsert({ email, lists: ['news'] });
        const c = await notify.campaigns.create({ subject: 'News', text: 'Hi', list: 'news' });
        box.notify = notify;
        const r = await notify.campaigns.send(c.id);
        assert.deepEqual([r.sent, r.failed, r.suppressed, r.done], [2, 0, 1, true]);
        assert.deepEqual(delivered, ['ann@example.com', 'cat@example.com']);
        assert.equal((await notify.campaigns.getCampaignReport(c.id)).suppressed, 1);
      });
    }
  });
}
