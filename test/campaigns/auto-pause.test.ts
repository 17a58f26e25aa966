import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { applyWebhookEvents } from '../../src/core/webhook-events.ts';
import { isNotifyError } from '../../src/errors.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';

/** bounce webhooks for the first `n` sends of the campaign, as a provider reports them */
async function bounce(notify: Notify, campaignId: number, n: number, type: 'bounce' | 'complaint' = 'bounce'): Promise<void> {
  const rows = await notify.context.store.db.selectFrom('notify_sends').select(['to_email', 'message_id']).where('campaign_id', '=', campaignId).where('status', '=', 'sent').orderBy('id').limit(n).execute();
  const events = rows.map((r) => ({ type, email: r.to_email, message_id: r.message_id!, id: `${type}-${r.message_id}` }));
  await applyWebhookEvents(notify.context, 'test', events, `c${campaignId}`);
}

test('autoPauseBounceRate: a share from 0 to 1; -1, 2 and "fast" are CONFIG_INVALID', async () => {
  assert.equal((await loadConfig({ autoPauseBounceRate: '0.05' as never }, { configFile: false, envFile: false, env: {} })).autoPauseBounceRate, 0.05);
  for (const bad of [-1, 2, 'fast']) {
    await assert.rejects(loadConfig({ autoPauseBounceRate: bad as never }, { configFile: false, envFile: false, env: {} }), (e) => isNotifyError(e, 'CONFIG_INVALID') && /autoPauseBounceRate/.test(e.message), String(bad));
  }
});

forEachEngine('auto-pause', (h) => {
  let notify: Notify;
  before(async () => {
    notify = await createNotify(testOptions(h.url, { autoPauseBounceRate: 0.05, batchSize: 250 }));
    const now = Date.now();
    const store = notify.context.store;
    await notify.lists.create({ name: 'a' });
    await notify.lists.create({ name: 'b' });
    await notify.lists.create({ name: 'c' });
    for (const list of ['a', 'b', 'c']) {
      const listId = (await store.lists.byName(list))!.id;
      const rows = Array.from({ length: 300 }, (_, i) => ({ email: `${list}${i}@example.com`, email_key: `${list}${i}@example.com`, status: 'subscribed', unsubscribe_token: `${list}tok${String(i).padStart(19, '0')}`, attributes: '{}', created_at: now, updated_at: now }));
      const ids = await store.db.insertInto('notify_contacts').values(rows).returning('id').execute();
      await store.db.insertInto('notify_list_members').values(ids.map((r) => ({ list_id: listId, contact_id: Number(r.id), created_at: now }))).execute();
    }
  });
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

  test('under 200 sends no share pauses: 50 bounces in the first 150 sends (33%) and the campaign goes on to the end', async () => {
    const small = await createNotify(testOptions(h.url, { autoPauseBounceRate: 0.05, batchSize: 150 }));
    try {
      const c = await small.campaigns.create({ subject: 'Young list', text: 'x', list: 'c' });
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
});
