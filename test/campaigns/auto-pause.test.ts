import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { manualClock, minutes } from '../../src/core/clock.ts';
import { newToken } from '../../src/core/tokens.ts';
import { applyWebhookEvents } from '../../src/core/webhook-events.ts';
import { isNotifyError } from '../../src/errors.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';

/** bounce webhooks for `n` sends of the campaign (in send order, after the first `skip`), as a provider reports them */
async function bounce(notify: Notify, campaignId: number, n: number, type: 'bounce' | 'complaint' = 'bounce', skip = 0): Promise<void> {
  const rows = await notify.context.store.db.selectFrom('notify_sends').select(['to_email', 'message_id']).where('campaign_id', '=', campaignId).where('status', '=', 'sent').orderBy('id').offset(skip).limit(n).execute();
  const events = rows.map((r) => ({ type, email: r.to_email, message_id: r.message_id!, id: `${type}-${r.message_id}` }));
  await applyWebhookEvents(notify.context, 'test', events, `c${campaignId}`);
}

/** one-click unsubscribes from the links of `n` sends of the campaign (in send order, after the first `skip`) */
async function unsubscribeByLink(notify: Notify, campaignId: number, n: number, skip: number): Promise<void> {
  const { db } = notify.context.store;
  const rows = await db.selectFrom('notify_sends').select(['token', 'contact_id']).where('campaign_id', '=', campaignId).where('status', '=', 'sent').orderBy('id').offset(skip).limit(n).execute();
  for (const r of rows) {
    // the contacts inserted in bulk above have placeholder tokens: each gets a well-formed one
    const token = newToken();
    await db.updateTable('notify_contacts').set({ unsubscribe_token: token }).where('id', '=', r.contact_id!).execute();
    const res = await notify.fetch(new Request(`http://x/notify/unsubscribe/${token}?s=${r.token}`, { method: 'POST', body: new URLSearchParams({ 'List-Unsubscribe': 'One-Click' }) }));
    assert.equal(res.status, 200);
  }
  assert.equal((await notify.campaigns.getCampaignReport(campaignId)).unsubscribed, n);
}

test('autoPauseBounceRate: a share from 0 to 1; -1, 2 and "fast" are CONFIG_INVALID', async () => {
  assert.equal((await loadConfig({ autoPauseBounceRate: '0.05' as never }, { configFile: false, envFile: false, env: {} })).autoPauseBounceRate, 0.05);
  for (const bad of [-1, 2, 'fast']) {
    await assert.rejects(loadConfig({ autoPauseBounceRate: bad as never }, { configFile: false, envFile: false, env: {} }), (e) => isNotifyError(e, 'CONFIG_INVALID') && /autoPauseBounceRate/.test(e.message), String(bad));
  }
});

forEachEngine('auto-pause', (h) => {
  let notify: Notify;
  let small: Notify;
  before(async () => {
    notify = await createNotify(testOptions(h.url, { autoPauseBounceRate: 0.05, batchSize: 250 }));
    // runs of 150 on the same database: fewer than AUTO_PAUSE_MIN_SENDS sends in one run
    small = await createNotify(testOptions(h.url, { autoPauseBounceRate: 0.05, batchSize: 150 }));
    const now = Date.now();
    const store = notify.context.store;
    for (const [list, size] of [['a', 300], ['b', 300], ['c', 1000], ['d', 1000], ['e', 500], ['f', 300], ['g', 500], ['h', 600], ['i', 600]] as const) {
      await notify.lists.create({ name: list });
      const listId = (await store.lists.byName(list))!.id;
      const rows = Array.from({ length: size }, (_, i) => ({ email: `${list}${i}@example.com`, email_key: `${list}${i}@example.com`, status: 'subscribed', unsubscribe_token: `${list}tok${String(i).padStart(19, '0')}`, attributes: '{}', created_at: now, updated_at: now }));
      const ids = await store.db.insertInto('notify_contacts').values(rows).returning('id').execute();
      await store.db.insertInto('notify_list_members').values(ids.map((r) => ({ list_id: listId, contact_id: Number(r.id), created_at: now }))).execute();
    }
  });
  after(() => small.close());
  after(() => notify.close());

  test('bounces and complaints over the rate of 250 sends pause the campaign; the reason is stored and no further message leaves', async () => {
    const c = await notify.campaigns.create({ subject: 'Bad list', text: 'x', list: 'a' });
    assert.equal((await notify.campaigns.send(c.id)).sent, 250);
    await bounce(notify, c.id, 10);
    await bounce(notify, c.id, 3, 'complaint');
    const r = await notify.campaigns.send(c.id);
    assert.equal(r.sent, 0);
    assert.equal(r.status, 'paused');
    const paused = await notify.campaigns.get(c.id);
    assert.equal(paused?.status, 'paused');
    assert.equal(paused?.status_reason, 'auto-paused: 10 bounces and 3 complaints in 250 sends (5.2%, above autoPauseBounceRate 5%)');
    assert.match(r.note ?? '', /auto-paused/);
    assert.deepEqual(await notify.campaigns.audience(c.id), { count: 50 }, 'the 50 not reached yet stay unsent');
    const resumed = await notify.campaigns.resume(c.id);
    assert.equal(resumed.status_reason, null, 'resume clears the reason');
  });

  test('a pause by hand keeps the whole campaign judged: resumed, it is auto-paused before sending more', async () => {
    const c = await notify.campaigns.create({ subject: 'Paused by hand', text: 'x', list: 'g' });
    assert.equal((await notify.campaigns.send(c.id)).sent, 250);
    await notify.campaigns.pause(c.id);
    await bounce(notify, c.id, 20);
    await notify.campaigns.resume(c.id);
    const r = await notify.campaigns.send(c.id);
    assert.equal(r.sent, 0);
    assert.equal((await notify.campaigns.get(c.id))?.status_reason, 'auto-paused: 20 bounces and 0 complaints in 250 sends (8%, above autoPauseBounceRate 5%)');
  });

  test('under 200 sends no share pauses: 50 bounces in the first 150 sends (33%) and the campaign goes on to the end', async () => {
    const small = await createNotify(testOptions(h.url, { autoPauseBounceRate: 0.05, batchSize: 150 }));
    try {
      const c = await small.campaigns.create({ subject: 'Young list', text: 'x', list: 'f' });
      assert.equal((await small.campaigns.send(c.id)).sent, 150);
      await bounce(small, c.id, 50);
      const r = await small.campaigns.send(c.id);
      assert.equal(r.sent, 150);
      const after = await small.campaigns.get(c.id);
      assert.equal(after?.status, 'sent');
      assert.equal(after?.status_reason, null);
    } finally {
      await small.close();
    }
  });

  test('at or under the rate (12 in 250: 4.8%) the campaign goes on', async () => {
    const c = await notify.campaigns.create({ subject: 'Fine list', text: 'x', list: 'b' });
    assert.equal((await notify.campaigns.send(c.id)).sent, 250);
    await bounce(notify, c.id, 12);
    const r = await notify.campaigns.send(c.id);
    assert.equal(r.sent, 50);
    assert.equal((await notify.campaigns.get(c.id))?.status, 'sent');
  });

  test('a resumed campaign sends again: only the sends after the resume are judged, and again over at least 200 of them', async () => {
    const c = await notify.campaigns.create({ subject: 'Cleaned list', text: 'x', list: 'c' });
    assert.equal((await notify.campaigns.send(c.id)).sent, 250);
    await bounce(notify, c.id, 50);
    assert.equal((await notify.campaigns.send(c.id)).status, 'paused', '50 in 250 (20%) pauses it');
    await notify.campaigns.resume(c.id);

    // 20% overall still; the resume accepted those: the next run sends
    const first = await notify.campaigns.send(c.id);
    assert.equal(first.sent, 250, first.note);
    assert.equal((await notify.campaigns.get(c.id))?.status, 'sending');
    // 10 in the 250 since the resume (4%), though 60 in 500 overall (12%): it goes on
    await bounce(notify, c.id, 10, 'bounce', 250);
    const second = await notify.campaigns.send(c.id);
    assert.equal(second.sent, 250, second.note);
    // 16 more: 26 in the 500 since the resume (5.2%) pauses it again
    await bounce(notify, c.id, 10, 'bounce', 260);
    await bounce(notify, c.id, 6, 'complaint', 270);
    const third = await notify.campaigns.send(c.id);
    assert.equal(third.sent, 0);
    assert.equal(third.status, 'paused');
    const paused = await notify.campaigns.get(c.id);
    assert.equal(paused?.status_reason, 'auto-paused: 26 bounces and complaints in 500 sends since it was resumed (5.2%, above autoPauseBounceRate 5%)');
    assert.deepEqual(await notify.campaigns.audience(c.id), { count: 250 });
  });

  /** a campaign to the list auto-paused by 20 bounces in its first 250 sends (8%), resumed, and 250 more sent */
  async function resumedAfterPause(list: string) {
    const c = await notify.campaigns.create({ subject: `Late reports ${list}`, text: 'x', list });
    assert.equal((await notify.campaigns.send(c.id)).sent, 250);
    await bounce(notify, c.id, 20);
    assert.equal((await notify.campaigns.send(c.id)).status, 'paused');
    await notify.campaigns.resume(c.id);
    assert.equal((await notify.campaigns.send(c.id)).sent, 250);
    return c;
  }

  test('bounces reported after the resume for messages sent before it do not count in the new window', async () => {
    const c = await resumedAfterPause('h');
    // the provider reports 30 more bounces and 5 complaints of the first 250 late, and 5 of the new ones
    await bounce(notify, c.id, 30, 'bounce', 20);
    await bounce(notify, c.id, 5, 'complaint', 50);
    await bounce(notify, c.id, 5, 'bounce', 250);
    // 5 in the 250 sent since the resume (2%): it goes on (counted with the late ones it would be 40 in 250, 16%)
    const next = await notify.campaigns.send(c.id);
    assert.equal(next.sent, 100, next.note);
    assert.equal((await notify.campaigns.get(c.id))?.status, 'sent');
    const report = await notify.campaigns.getCampaignReport(c.id);
    assert.deepEqual([report.bounced, report.complained], [55, 5], 'the stats count every bounce and complaint');
  });

  test('after the resume, bounces of sends made since then still pause it; the late ones are left out of the figures', async () => {
    const c = await resumedAfterPause('i');
    await bounce(notify, c.id, 30, 'bounce', 20);
    await bounce(notify, c.id, 13, 'bounce', 250);
    // late unsubscribes from the links of sends before the resume count neither in the figures nor in the base
    await unsubscribeByLink(notify, c.id, 5, 100);
    // 13 in the 250 since the resume (5.2%)
    const r = await notify.campaigns.send(c.id);
    assert.equal(r.sent, 0);
    assert.equal((await notify.campaigns.get(c.id))?.status_reason, 'auto-paused: 13 bounces and complaints in 250 sends since it was resumed (5.2%, above autoPauseBounceRate 5%)');
  });

  test('after a resume fewer than 200 sends pause nothing, however many bounce', async () => {
    const c = await notify.campaigns.create({ subject: 'Second chance', text: 'x', list: 'd' });
    assert.equal((await notify.campaigns.send(c.id)).sent, 250);
    await bounce(notify, c.id, 13);
    assert.equal((await notify.campaigns.send(c.id)).status, 'paused');
    await notify.campaigns.resume(c.id);
    assert.equal((await small.campaigns.send(c.id)).sent, 150);
    // 30 of the 150 since the resume bounce (20%): too few sends to judge
    await bounce(notify, c.id, 30, 'bounce', 250);
    assert.equal((await small.campaigns.send(c.id)).sent, 150);
    // 30 in 300 since the resume (10%): paused
    const r = await small.campaigns.send(c.id);
    assert.equal(r.sent, 0);
    assert.equal(r.status, 'paused');
    assert.match((await notify.campaigns.get(c.id))?.status_reason ?? '', /^auto-paused: 30 bounces and complaints in 300 sends since it was resumed \(10%/);
  });

  test('a paused campaign scheduled again is judged from its new start, as a resumed one', async () => {
    const clock = manualClock(Date.now());
    const clocked = await createNotify(testOptions(h.url, { autoPauseBounceRate: 0.05, batchSize: 250, clock }));
    try {
      const c = await clocked.campaigns.create({ subject: 'Later', text: 'x', list: 'e' });
      assert.equal((await clocked.campaigns.send(c.id)).sent, 250);
      await bounce(clocked, c.id, 13);
      assert.equal((await clocked.campaigns.send(c.id)).status, 'paused');
      await clocked.campaigns.schedule(c.id, new Date(clock.now() + minutes(60)));
      clock.advance(minutes(61));
      const r = await clocked.campaigns.send(c.id);
      assert.equal(r.sent, 250, r.note);
      assert.equal((await clocked.campaigns.get(c.id))?.status, 'sent');
    } finally {
      await clocked.close();
    }
  });
});
