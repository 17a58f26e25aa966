import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Notify } from '../../src/notify.ts';
import { parseJson } from '../../src/store/rows.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';
import { insertCampaign, insertSend } from '../helpers/sends.ts';

/*
 * How verified events are applied (src/core/webhook-events.ts), whatever the driver: which send an
 * event is counted against, the Message-ID forms providers report, and receipts for long event ids.
 * What a mutation run of that file found no test for (`npm run test:mutation -- webhook-events`).
 */

/** A driver that trusts every request and reads its events from the JSON body. */
const jsonDriver = {
  name: 'jsonhook',
  verifySignature: () => true,
  isSubscriptionConfirmation: () => false,
  confirmSubscription: () => {},
  parseEvents: (r: { text: string }) => JSON.parse(r.text),
};

const post = async (n: Notify, events: unknown[]) => {
  const res = await call(n, '/notify/webhook', { method: 'POST', body: JSON.stringify(events) });
  assert.equal(res.status, 200);
  return res.json();
};

async function setMessageId(n: Notify, sendId: number, messageId: string) {
  await n.context.store.db.updateTable('notify_sends').set({ message_id: messageId }).where('id', '=', sendId).execute();
}

async function eventRows(n: Notify, type: string) {
  const rows = await n.context.store.db.selectFrom('notify_events').selectAll().where('type', '=', type).orderBy('id').execute();
  return rows.map((r) => ({
    send_id: r.send_id === null ? null : Number(r.send_id),
    contact_id: r.contact_id === null ? null : Number(r.contact_id),
    campaign_id: r.campaign_id === null ? null : Number(r.campaign_id),
    metadata: parseJson(r.metadata),
  }));
}

forEachEngine('applying webhook events: attribution, Message-ID forms, receipts', (h) => {
  const notify = useNotify(h, { webhookDriver: jsonDriver as never });

  test('a bracketed Message-ID finds the send stored without brackets, and the bounce counts for its campaign', async () => {
    const campaignId = await insertCampaign(notify().context.store);
    const send = await insertSend(notify(), { campaignId });
    await setMessageId(notify(), send.id, 'plain-1@mail.example.com');
    const email = (await notify().contacts.get(send.contactId))!.email;
    assert.deepEqual(await post(notify(), [{ type: 'bounce', email, message_id: '<plain-1@mail.example.com>', id: 'ev-plain-1' }]), { received: 1, applied: 1, duplicates: 0, unknownContacts: 0 });
    assert.equal((await notify().campaigns.getCampaignReport(campaignId)).bounced, 1);
    const rows = (await eventRows(notify(), 'bounce')).filter((r) => r.contact_id === send.contactId);
    assert.deepEqual(rows, [{ send_id: send.id, contact_id: send.contactId, campaign_id: campaignId, metadata: { provider: 'jsonhook', message_id: '<plain-1@mail.example.com>' } }]);
  });

  test('a Message-ID of a send to another contact: the bounce applies to the address, not to that send or its campaign', async () => {
    const campaignId = await insertCampaign(notify().context.store);
    const other = await insertSend(notify(), { campaignId });
    await setMessageId(notify(), other.id, '<other-1@mail.example.com>');
    const target = await notify().contacts.upsert({ email: 'target-attrib@example.com' });
    await post(notify(), [{ type: 'bounce', email: 'target-attrib@example.com', message_id: '<other-1@mail.example.com>', id: 'ev-attrib-1' }]);
    assert.equal((await notify().contacts.get(target.id))?.status, 'bounced');
    assert.equal((await notify().contacts.get(other.contactId))?.status, 'subscribed');
    assert.equal((await notify().campaigns.getCampaignReport(campaignId)).bounced, 0);
    const rows = (await eventRows(notify(), 'bounce')).filter((r) => r.contact_id === target.id);
    assert.deepEqual(rows, [{ send_id: null, contact_id: target.id, campaign_id: null, metadata: { provider: 'jsonhook', message_id: '<other-1@mail.example.com>' } }]);
  });

  test('a soft bounce for an address that is no contact (any more): linked to the send that went to it, without a contact', async () => {
    const campaignId = await insertCampaign(notify().context.store);
    const send = await insertSend(notify(), { campaignId, email: 'gone-soft@example.com' });
    await setMessageId(notify(), send.id, '<gone-soft@mail.example.com>');
    // The contact row removed behind the library's back, the send kept: what a provider may still report on.
    await notify().context.store.db.updateTable('notify_sends').set({ contact_id: null }).where('id', '=', send.id).execute();
    await notify().context.store.db.deleteFrom('notify_contacts').where('id', '=', send.contactId).execute();
    assert.equal(await notify().contacts.get('gone-soft@example.com'), undefined);
    const result = await post(notify(), [
      { type: 'soft_bounce', email: 'GONE-SOFT@example.com', message_id: '<gone-soft@mail.example.com>', id: 'ev-soft-gone' },
      { type: 'soft_bounce', email: 'someone-else@example.com', message_id: '<gone-soft@mail.example.com>', id: 'ev-soft-else' },
      { type: 'soft_bounce', email: 'no-id@example.com', message_id: '', id: 'ev-soft-noid' },
    ]);
    assert.deepEqual(result, { received: 3, applied: 3, duplicates: 0, unknownContacts: 0 });
    const rows = await eventRows(notify(), 'soft_bounce');
    assert.deepEqual(rows.slice(-3), [
      { send_id: send.id, contact_id: null, campaign_id: campaignId, metadata: { provider: 'jsonhook', message_id: '<gone-soft@mail.example.com>' } },
      { send_id: null, contact_id: null, campaign_id: null, metadata: { provider: 'jsonhook', message_id: '<gone-soft@mail.example.com>' } },
      { send_id: null, contact_id: null, campaign_id: null, metadata: { provider: 'jsonhook' } },
    ]);
  });

  test('a second bounce (another event id) for a contact already bounced: counted as applied, but no second event row, counter or application event', async () => {
    const campaignId = await insertCampaign(notify().context.store);
    const send = await insertSend(notify(), { campaignId });
    await setMessageId(notify(), send.id, '<twice-1@mail.example.com>');
    const email = (await notify().contacts.get(send.contactId))!.email;
    let fired = 0;
    const off = notify().on('notify:contact.bounced', () => void fired++);
    const bounce = (id: string) => [{ type: 'bounce', email, message_id: '<twice-1@mail.example.com>', id }];
    assert.deepEqual(await post(notify(), bounce('ev-twice-1')), { received: 1, applied: 1, duplicates: 0, unknownContacts: 0 });
    assert.deepEqual(await post(notify(), bounce('ev-twice-2')), { received: 1, applied: 1, duplicates: 0, unknownContacts: 0 });
    off();
    assert.equal(fired, 1);
    assert.equal((await eventRows(notify(), 'bounce')).filter((r) => r.contact_id === send.contactId).length, 1);
    assert.equal((await notify().campaigns.getCampaignReport(campaignId)).bounced, 1);
  });

  test('a Message-ID without @ or brackets is looked up only as given', async () => {
    const send = await insertSend(notify());
    await setMessageId(notify(), send.id, '<bare-token-1>');
    const email = (await notify().contacts.get(send.contactId))!.email;
    await post(notify(), [{ type: 'soft_bounce', email, message_id: 'bare-token-1', id: 'ev-bare-1' }]);
    const rows = (await eventRows(notify(), 'soft_bounce')).filter((r) => r.contact_id === send.contactId);
    assert.deepEqual(rows.map((r) => r.send_id), [null]);
  });

  test('event ids up to 200 characters are kept as the receipt key, longer ones hashed; a redelivery is a duplicate either way', async () => {
    const contact = await notify().contacts.upsert({ email: 'long-ids@example.com' });
    const ids = ['a'.repeat(200), 'b'.repeat(201), `${'c'.repeat(300)}-1`, `${'c'.repeat(300)}-2`];
    const events = ids.map((id) => ({ type: 'soft_bounce', email: contact.email, message_id: '', id }));
    assert.deepEqual(await post(notify(), events), { received: 4, applied: 4, duplicates: 0, unknownContacts: 0 });
    assert.deepEqual(await post(notify(), events), { received: 4, applied: 0, duplicates: 4, unknownContacts: 0 });
    const keys = (await notify().context.store.db.selectFrom('notify_webhook_receipts').select('message_id').where('provider', '=', 'jsonhook').execute()).map((r) => r.message_id);
    assert.ok(keys.includes('a'.repeat(200)));
    const hashed = keys.filter((k) => k.startsWith('sha256:'));
    assert.equal(hashed.length, 3);
    for (const k of hashed) assert.match(k, /^sha256:[0-9a-f]{64}$/);
    assert.equal(keys.filter((k) => k.length > 200).length, 0);
  });

  test('events without ids in one delivery are told apart; the same body again is all duplicates', async () => {
    const contact = await notify().contacts.upsert({ email: 'no-ids@example.com' });
    const events = [
      { type: 'soft_bounce', email: contact.email, message_id: '' },
      { type: 'soft_bounce', email: contact.email, message_id: '' },
    ];
    assert.deepEqual(await post(notify(), events), { received: 2, applied: 2, duplicates: 0, unknownContacts: 0 });
    assert.deepEqual(await post(notify(), events), { received: 2, applied: 0, duplicates: 2, unknownContacts: 0 });
    assert.equal((await eventRows(notify(), 'soft_bounce')).filter((r) => r.contact_id === contact.id).length, 2);
  });
});
