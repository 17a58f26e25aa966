import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forEachEngine, useNotify } from '../helpers/engines.ts';

forEachEngine('a person’s data: contacts.export and contacts.erase', (h) => {
  const notify = useNotify(h, { trackIpAddress: true });
  const db = () => notify().context.store.db;
  const ids: { contact: number; send: number; other: number; oneOff: number } = { contact: 0, send: 0, other: 0, oneOff: 0 };

  test('export returns the contact, opt-in, lists, sends, events (metadata included) and enrollments', async () => {
    const n = notify();
    const ann = await n.contacts.upsert({ email: 'ann@example.com', name: 'Ann', lists: ['news'], attributes: { city: 'Oslo' } });
    ids.contact = ann.id;
    await db().updateTable('notify_contacts').set({ consent_at: 1_700_000_000_000, consent_source: 'form:/signup', consent_ip: '198.51.100.4' }).where('id', '=', ann.id).execute();
    const campaign = await n.campaigns.create({ subject: 'Hello Ann', html: '<p>Hi</p>', list: 'news' });
    await n.campaigns.send(campaign.id);
    const send = await db().selectFrom('notify_sends').select(['id', 'token']).where('contact_id', '=', ann.id).executeTakeFirstOrThrow();
    ids.send = Number(send.id);
    await n.fetch(new Request(`http://localhost/notify/open/${send.token}`));
    await n.flush();
    // what a click leaves with trackIpAddress, and a provider event that names only the send (its writer adds her)
    await db()
      .insertInto('notify_events')
      .values({ type: 'click', send_id: ids.send, contact_id: ann.id, campaign_id: campaign.id, link_index: 0, metadata: JSON.stringify({ ip: '203.0.113.9' }), is_machine: 0, machine_reason: null, created_at: Date.now() })
      .execute();
    await n.context.store.events.insertMany([
      { type: 'soft_bounce', send_id: ids.send, contact_id: null, campaign_id: campaign.id, link_index: null, metadata: { provider: 'ses', detail: 'ann@example.com mailbox full' }, is_machine: 0, machine_reason: null, created_at: Date.now() },
    ]);
    const seq = await n.drips.createSequence({ name: 'welcome', steps: [{ delayMinutes: 0, subject: 'Welcome', html: '<p>hi</p>' }] });
    await n.drips.enroll({ contact: ann.id, sequence: seq.id });

    const data = await n.contacts.export('ANN@example.com');
    assert.ok(data);
    assert.deepEqual([data.contact.email, data.contact.name, data.contact.attributes], ['ann@example.com', 'Ann', { city: 'Oslo' }]);
    assert.deepEqual(data.optin, { consent_at: new Date(1_700_000_000_000), consent_source: 'form:/signup', consent_ip: '198.51.100.4', confirmation_sent_at: null });
    assert.deepEqual(
      data.lists.map((l) => l.name),
      ['news'],
    );
    assert.deepEqual(
      data.sends.map((s) => [s.subject, s.status, s.to_email]),
      [['Hello Ann', 'sent', 'ann@example.com']],
    );
    assert.ok(data.sends[0].sent_at instanceof Date && data.sends[0].opened_at instanceof Date);
    assert.deepEqual(data.events.map((e) => e.type).sort(), ['click', 'open', 'soft_bounce']);
    assert.equal(data.events.find((e) => e.type === 'click')?.metadata.ip, '203.0.113.9');
    assert.deepEqual(
      data.enrollments.map((e) => [e.sequence, e.status]),
      [['welcome', 'active']],
    );
    await n.contacts.unsubscribe(ann.id, 'news');
    assert.deepEqual(
      (await n.contacts.export(ann.id))!.status_changes.map((h) => [h.list, h.from, h.to, h.at instanceof Date]),
      [
        ['news', null, 'subscribed', true],
        ['news', 'subscribed', 'unsubscribed', true],
      ],
    );
    assert.equal(await n.contacts.export('nobody@example.com'), undefined);
  });

  test('erase removes all of it; sends and events stay only as anonymous rows for campaign totals', async () => {
    const n = notify();
    // a one-off message to someone else that left Ann (unsubscribed) out of its cc
    await n.contacts.upsert({ email: 'ann@example.com', status: 'unsubscribed' });
    const oneOff = await n.send({ to: 'bob@example.com', cc: 'ann@example.com', subject: 'Minutes', text: 'hi' });
    ids.oneOff = oneOff.id;
    assert.equal(await n.contacts.erase('ann@example.com'), true);

    assert.equal(await n.contacts.get('ann@example.com'), undefined);
    assert.equal(await n.contacts.export('ann@example.com'), undefined);
    const members = await db().selectFrom('notify_list_members').selectAll().where('contact_id', '=', ids.contact).execute();
    const enrollments = await db().selectFrom('notify_enrollments').selectAll().where('contact_id', '=', ids.contact).execute();
    assert.deepEqual([members, enrollments], [[], []]);
    const send = await db().selectFrom('notify_sends').selectAll().where('id', '=', ids.send).executeTakeFirstOrThrow();
    assert.deepEqual([send.to_email, send.subject, send.contact_id, send.error, send.message_id, send.status], ['', '', null, null, null, 'sent']);
    const events = await db().selectFrom('notify_events').select(['type', 'contact_id', 'metadata']).where('send_id', '=', ids.send).execute();
    assert.equal(events.length, 3, 'the events stay for the campaign figures');
    for (const e of events) {
      assert.equal(e.contact_id, null);
      assert.deepEqual(typeof e.metadata === 'string' ? JSON.parse(e.metadata) : e.metadata, {});
    }
    const other = await db().selectFrom('notify_sends').select('suppressed_recipients').where('id', '=', ids.oneOff).executeTakeFirstOrThrow();
    const left = typeof other.suppressed_recipients === 'string' ? JSON.parse(other.suppressed_recipients) : other.suppressed_recipients;
    assert.deepEqual(left, [{ field: 'cc', contact_id: null, status: 'unsubscribed' }]);
    const dump = JSON.stringify(await db().selectFrom('notify_sends').selectAll().execute()) + JSON.stringify(await db().selectFrom('notify_events').selectAll().execute());
    assert.ok(!/ann@example\.com|203\.0\.113\.9|Hello Ann/i.test(dump), 'nothing left names her');
    const stats = await n.campaigns.getCampaignStats(Number((await db().selectFrom('notify_sends').select('campaign_id').where('id', '=', ids.send).executeTakeFirstOrThrow()).campaign_id));
    assert.deepEqual([stats.total, stats.sent, stats.opened], [1, 1, 1], 'anonymous counters stay');
  });
});
