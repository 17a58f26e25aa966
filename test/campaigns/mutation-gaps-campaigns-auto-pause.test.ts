// autoPauseBounceRate at its edges, read where a user sees it: exactly the minimum of sends, exactly the
// rate, the option off, the pause at the start of a run (its note, its log line), and the window that
// starts when an auto-paused campaign is resumed (its bounces and complaints both left out).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyWebhookEvents } from '../../src/core/webhook-events.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { recordingLogger } from '../helpers/log-lines.ts';

/** `size` subscribed members of a new list, inserted in one statement (a few hundred upserts cost seconds) */
async function bulkList(notify: Notify, list: string, size: number): Promise<void> {
  const { store } = notify.context;
  const now = Date.now();
  await notify.lists.create({ name: list });
  const listId = (await store.lists.byName(list))!.id;
  const contacts = Array.from({ length: size }, (_, i) => ({ email: `${list}.${i}@example.com`, email_key: `${list}.${i}@example.com`, status: 'subscribed', unsubscribe_token: `${list}-t-${String(i).padStart(20, '0')}`, attributes: '{}', created_at: now, updated_at: now }));
  const ids = await store.db.insertInto('notify_contacts').values(contacts).returning('id').execute();
  await store.db.insertInto('notify_list_members').values(ids.map((r) => ({ list_id: listId, contact_id: Number(r.id), created_at: now }))).execute();
}

/** the provider reports `n` of the campaign's delivered sends (in send order, from `from`) as bounced or complained */
async function report(notify: Notify, campaignId: number, type: 'bounce' | 'complaint', n: number, from: number): Promise<void> {
  const sends = await notify.context.store.db.selectFrom('notify_sends').select(['to_email', 'message_id']).where('campaign_id', '=', campaignId).where('status', '=', 'sent').orderBy('id').offset(from).limit(n).execute();
  assert.equal(sends.length, n);
  await applyWebhookEvents(
    notify.context,
    'test',
    sends.map((s) => ({ type, email: s.to_email, message_id: s.message_id!, id: `${type}:${s.message_id}` })),
    `c${campaignId}`,
  );
}

forEachEngine('auto-pause at its edges', (h) => {
  test('exactly 200 sends over the rate: the next run pauses it at its start, says why and logs the figures', async (t) => {
    const log = recordingLogger();
    const notify = await createNotify(testOptions(h.url, { autoPauseBounceRate: 0.05, batchSize: 200, logger: log.logger }));
    t.after(() => notify.close());
    await bulkList(notify, 'edge', 250);
    const c = await notify.campaigns.create({ subject: 'Edge', text: 'x', list: 'edge' });
    assert.equal((await notify.campaigns.send(c.id)).sent, 200);
    await report(notify, c.id, 'bounce', 11, 0);
    const r = await notify.campaigns.send(c.id);
    const reason = 'auto-paused: 11 bounces and 0 complaints in 200 sends (5.5%, above autoPauseBounceRate 5%)';
    assert.deepEqual([r.sent, r.status, r.note], [0, 'paused', `campaign ${c.id} is paused (${reason}); nothing is sent`]);
    assert.equal((await notify.campaigns.get(c.id))?.status_reason, reason);
    const warned = log.lines.filter((l) => l.level === 40 && l.campaignId === c.id);
    assert.deepEqual(
      warned.map(({ sent, bounced, complained, sinceResume, msg }) => ({ sent, bounced, complained, sinceResume, msg })),
      [{ sent: 200, bounced: 11, complained: 0, sinceResume: undefined, msg: reason }],
    );
  });

  test('exactly at the rate (10 of 200) it goes on; with the option at 0 any share goes on', async (t) => {
    const at = await createNotify(testOptions(h.url, { autoPauseBounceRate: 0.05, batchSize: 200 }));
    const off = await createNotify(testOptions(h.url, { autoPauseBounceRate: 0, batchSize: 200 }));
    t.after(() => at.close());
    t.after(() => off.close());
    await bulkList(at, 'at-rate', 210);
    await bulkList(at, 'rate-off', 210);
    for (const [notify, list, bounces] of [[at, 'at-rate', 10], [off, 'rate-off', 100]] as const) {
      const c = await notify.campaigns.create({ subject: list, text: 'x', list });
      assert.equal((await notify.campaigns.send(c.id)).sent, 200);
      await report(notify, c.id, 'bounce', bounces, 0);
      const r = await notify.campaigns.send(c.id);
      assert.deepEqual([r.sent, r.status], [10, 'sent'], list);
    }
  });

  test('resumed after an auto-pause: its earlier bounces and complaints are both left out, the new ones judged alone', async (t) => {
    const log = recordingLogger();
    const notify = await createNotify(testOptions(h.url, { autoPauseBounceRate: 0.05, batchSize: 200, logger: log.logger }));
    t.after(() => notify.close());
    await bulkList(notify, 'window', 650);
    const c = await notify.campaigns.create({ subject: 'Window', text: 'x', list: 'window' });
    await notify.campaigns.send(c.id);
    await report(notify, c.id, 'bounce', 6, 0);
    await report(notify, c.id, 'complaint', 5, 6);
    assert.equal((await notify.campaigns.send(c.id)).status, 'paused');
    assert.match((await notify.campaigns.get(c.id))?.status_reason ?? '', /^auto-paused: 6 bounces and 5 complaints in 200 sends/);
    await notify.campaigns.resume(c.id);
    // 200 more, 10 of them bounced: 5.0% since the resume, not above the rate (21 of 200 with the 11 before)
    assert.equal((await notify.campaigns.send(c.id)).sent, 200);
    await report(notify, c.id, 'bounce', 10, 200);
    const goesOn = await notify.campaigns.send(c.id);
    assert.deepEqual([goesOn.sent, goesOn.status], [200, 'sending'], goesOn.note);
    // 12 more of the next 200: 22 in 400 since the resume
    await report(notify, c.id, 'bounce', 12, 400);
    log.lines.length = 0;
    const r = await notify.campaigns.send(c.id);
    const reason = 'auto-paused: 22 bounces and complaints in 400 sends since it was resumed (5.5%, above autoPauseBounceRate 5%)';
    assert.deepEqual([r.sent, r.status, (await notify.campaigns.get(c.id))?.status_reason], [0, 'paused', reason]);
    const warned = log.lines.filter((l) => l.level === 40 && l.campaignId === c.id);
    assert.deepEqual(
      warned.map(({ sent, bounced, complained, sinceResume }) => ({ sent, bounced, complained, sinceResume })),
      [{ sent: 600, bounced: 28, complained: 5, sinceResume: { sent: 400, bad: 22 } }],
    );
  });
});
