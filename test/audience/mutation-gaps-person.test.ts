import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import type { Notify } from '../../src/notify.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';
import { call } from '../helpers/http.ts';

/**
 * What person-data.test.ts and preferences.test.ts leave unread: the export's empty ids (a one-off
 * send has no campaign), membership statuses and machine events; a transactional contact's first
 * tick in the preference centre; a ticked list kept, not rejoined.
 */

forEachEngine('contacts.export: ids, memberships and machine events as stored', (h) => {
  const notify = useNotify(h);

  test("a campaign send names its campaign, a one-off send none; lists carry their status; a scanner's event is a machine's", async () => {
    const n = notify();
    const ann = await n.contacts.upsert({ email: 'export@example.com', lists: ['people', 'former'] });
    await n.contacts.unsubscribe(ann.id, 'former');
    const campaign = await n.campaigns.create({ subject: 'Campaign', html: '<p>Hi</p>', list: 'people' });
    await n.campaigns.send(campaign.id);
    await n.send({ to: 'export@example.com', subject: 'Receipt', html: '<p>Thanks</p>' });
    const now = Date.now();
    await n.context.store.events.insertMany([
      { type: 'open', send_id: null, contact_id: ann.id, campaign_id: campaign.id, link_index: null, metadata: {}, is_machine: 1, machine_reason: 'scanner', created_at: now },
      { type: 'click', send_id: null, contact_id: ann.id, campaign_id: null, link_index: 0, metadata: {}, is_machine: 0, machine_reason: null, created_at: now },
    ]);
    const data = await n.contacts.export(ann.id);
    assert.ok(data);
    const sends = [...data.sends].sort((a, b) => a.subject.localeCompare(b.subject));
    assert.deepEqual(
      sends.map((s) => [s.subject, s.campaign_id, s.enrollment_id]),
      [
        ['Campaign', campaign.id, null],
        ['Receipt', null, null],
      ],
    );
    assert.deepEqual(
      [...data.lists].sort((a, b) => a.name.localeCompare(b.name)).map((l) => [l.name, l.status, l.joined_at instanceof Date]),
      [
        ['former', 'unsubscribed', true],
        ['people', 'subscribed', true],
      ],
    );
    const events = data.events.filter((e) => e.type === 'open' || e.type === 'click').map((e) => [e.type, e.is_machine, e.machine_reason, e.send_id, e.campaign_id]);
    assert.deepEqual(events.sort(), [
      ['click', false, null, null, null],
      ['open', true, 'scanner', null, campaign.id],
    ]);
  });
});

const post = (n: Notify, token: string, lists: number[]) =>
  call(n, `/notify/preferences/${token}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(lists.map((id) => ['list', String(id)])).toString() });

forEachEngine('preference centre: a first tick and a tick kept', (h) => {
  const notify = useNotify(h);

  test('a contact only transactional mail went to, ticking a public list, becomes subscribed', async () => {
    const n = notify();
    const open = await n.lists.create({ name: 'Open', public: true });
    const receipt = await n.contacts.upsert({ email: 'receipt-only@example.com', status: 'transactional' });
    assert.equal((await post(n, receipt.unsubscribe_token, [open.id])).status, 200);
    const now = await n.contacts.get(receipt.id);
    assert.deepEqual([now?.status, now?.lists], ['subscribed', ['Open']]);
  });

  test('a list still ticked is kept as it was: the member does not rejoin (joined_at unchanged)', async () => {
    const n = notify();
    const kept = await n.lists.create({ name: 'Kept', public: true });
    const bea = await n.contacts.upsert({ email: 'kept@example.com', lists: ['Kept'] });
    const joined = (await n.contacts.export(bea.id))?.lists.find((l) => l.name === 'Kept')?.joined_at;
    assert.ok(joined instanceof Date);
    await sleep(20);
    assert.equal((await post(n, bea.unsubscribe_token, [kept.id])).status, 200);
    assert.deepEqual((await n.contacts.export(bea.id))?.lists.find((l) => l.name === 'Kept')?.joined_at, joined);
  });
});
