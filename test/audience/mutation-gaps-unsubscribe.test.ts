import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { maskEmail, unsubscribe, unsubscribeList } from '../../src/core/unsubscribe.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import type { NotifyEventMap } from '../../src/index.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';
import { reached } from './helpers.ts';

/**
 * What list-scoped unsubscribes hand on that the scope tests never read: the app event's contact and
 * send, the counters of a leave without a campaign, the 'all' scope with a list campaign, and
 * unsubscribeList without a usable send.
 */
type Fired = NotifyEventMap['notify:contact.unsubscribed'];

/** Sends the campaign and returns each recipient's send token (what `?s=` of the long link carries), by address. */
async function sendTokens(n: Notify, sink: SmtpSink, campaignId: number): Promise<Map<string, string>> {
  await reached(n, sink, campaignId);
  const rows = await n.context.store.db
    .selectFrom('notify_sends')
    .innerJoin('notify_contacts', 'notify_contacts.id', 'notify_sends.contact_id')
    .select(['notify_contacts.email', 'notify_sends.token'])
    .where('notify_sends.campaign_id', '=', campaignId)
    .execute();
  return new Map(rows.map((r) => [r.email, r.token]));
}

async function sendId(n: Notify, token: string): Promise<number> {
  const row = await n.context.store.db.selectFrom('notify_sends').select('id').where('token', '=', token).executeTakeFirstOrThrow();
  return Number(row.id);
}

forEachEngine("unsubscribeScope 'list': what the leave hands on", (h) => {
  let sink: SmtpSink;
  let notify: Notify;
  const fired: Fired[] = [];
  before(async () => {
    sink = await startSmtpSink();
    notify = await createNotify(testOptions(h.url, { mailer: sink.url, unsubscribeScope: 'list' }));
    notify.on('notify:contact.unsubscribed', (p) => {
      fired.push(p);
    });
    await notify.lists.create({ name: 'Offers' });
    await notify.lists.create({ name: 'Tips' });
    for (const who of ['ann', 'bob']) await notify.contacts.upsert({ email: `${who}@example.com`, lists: ['Offers', 'Tips'] });
  });
  after(async () => {
    await notify.close();
    await sink.close();
  });

  test("the app event and the result carry the contact's remaining lists and the send", async () => {
    const offers = await notify.campaigns.create({ subject: 'Offer', html: '<p>Hi</p>', list: 'Offers' });
    const tokens = await sendTokens(notify, sink, offers.id);
    const ann = (await notify.contacts.get('ann@example.com'))!;
    const res = await unsubscribe(notify.context, ann.unsubscribe_token, { source: 'one-click', sendToken: tokens.get('ann@example.com') });
    assert.equal(res.outcome, 'unsubscribed');
    assert.ok(res.outcome === 'unsubscribed');
    assert.equal(res.list, 'Offers');
    assert.deepEqual(res.contact.lists, ['Tips'], 'the result names the list left no more');
    const id = await sendId(notify, tokens.get('ann@example.com')!);
    assert.equal(fired.length, 1);
    assert.deepEqual(fired[0].contact.lists, ['Tips'], "the event's contact has left Offers and kept Tips");
    assert.equal(fired[0].list, 'Offers');
    assert.equal(fired[0].sendId, id, 'the event names the send whose link was used');
    const rows = await notify.context.store.db.selectFrom('notify_events').select(['send_id', 'campaign_id']).where('contact_id', '=', ann.id).where('type', '=', 'unsubscribe').execute();
    assert.deepEqual(
      rows.map((r) => [Number(r.send_id), Number(r.campaign_id)]),
      [[id, offers.id]],
    );
    assert.deepEqual((await notify.contacts.get('ann@example.com'))!.lists, ['Tips']);
  });

  test('unsubscribeList: no send, a send of a campaign to everyone, and a list campaign', async () => {
    const bob = (await notify.contacts.get('bob@example.com'))!;
    assert.equal(await unsubscribeList(notify.context, bob, undefined), undefined);
    assert.equal(await unsubscribeList(notify.context, bob, 'not-a-token'), undefined);
    const all = await notify.campaigns.create({ subject: 'To all', html: '<p>Hi</p>' });
    const allTokens = await sendTokens(notify, sink, all.id);
    assert.equal(await unsubscribeList(notify.context, bob, allTokens.get('bob@example.com')), undefined);
    const tips = await notify.campaigns.create({ subject: 'Tip', html: '<p>Hi</p>', list: 'Tips' });
    const tipTokens = await sendTokens(notify, sink, tips.id);
    assert.equal(await unsubscribeList(notify.context, bob, tipTokens.get('bob@example.com')), 'Tips');
  });

  test('leaving a list without a campaign (the API) adds to no campaign counter', async () => {
    const counters = async () => (await notify.context.store.db.selectFrom('notify_campaign_counters').select(['campaign_id', 'unsubscribed']).orderBy('campaign_id').execute()).map((r) => [Number(r.campaign_id), Number(r.unsubscribed)]);
    const start = await counters();
    const firedBefore = fired.length;
    const bob = await notify.contacts.unsubscribe('bob@example.com', 'Offers');
    assert.deepEqual(bob.lists, ['Tips']);
    assert.equal(bob.status, 'subscribed');
    assert.deepEqual(await counters(), start);
    assert.equal(fired.length, firedBefore + 1);
    assert.deepEqual(fired.at(-1)!.contact.lists, ['Tips']);
    assert.equal(fired.at(-1)!.sendId, null);
  });
});

forEachEngine("unsubscribeScope 'all': a list campaign's link unsubscribes from everything", (h) => {
  let sink: SmtpSink;
  let notify: Notify;
  const fired: Fired[] = [];
  before(async () => {
    sink = await startSmtpSink();
    notify = await createNotify(testOptions(h.url, { mailer: sink.url }));
    notify.on('notify:contact.unsubscribed', (p) => {
      fired.push(p);
    });
    await notify.lists.create({ name: 'Offers' });
    await notify.lists.create({ name: 'Tips' });
    await notify.contacts.upsert({ email: 'ann@example.com', lists: ['Offers', 'Tips'] });
  });
  after(async () => {
    await notify.close();
    await sink.close();
  });

  test('the contact is unsubscribed, no list is named, and the campaign counts it', async () => {
    const offers = await notify.campaigns.create({ subject: 'Offer', html: '<p>Hi</p>', list: 'Offers' });
    const tokens = await sendTokens(notify, sink, offers.id);
    const ann = (await notify.contacts.get('ann@example.com'))!;
    assert.equal(await unsubscribeList(notify.context, ann, tokens.get('ann@example.com')), undefined);
    const res = await unsubscribe(notify.context, ann.unsubscribe_token, { source: 'link', sendToken: tokens.get('ann@example.com') });
    assert.ok(res.outcome === 'unsubscribed');
    assert.equal(res.list, undefined);
    assert.equal((await notify.contacts.get('ann@example.com'))!.status, 'unsubscribed');
    assert.equal(fired.length, 1);
    assert.equal(fired[0].list, undefined);
    assert.equal(Number((await notify.context.store.counters.get(offers.id)).unsubscribed), 1);
  });
});

test('maskEmail keeps an address without a local part, or without @, wholly hidden', () => {
  assert.equal(maskEmail('ann@example.com'), 'a**@example.com');
  assert.equal(maskEmail('@example.com'), '***');
  assert.equal(maskEmail('no-at-sign'), '***');
});
