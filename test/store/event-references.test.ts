import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/store/schema.ts';
import { createStore } from '../../src/store/index.ts';
import { forEachEngine, useNotify } from '../helpers/engines.ts';

/**
 * What the foreign keys of notify_events did (PostgreSQL has none since migration 016, for the
 * tracking writer's sake) is done by the code that deletes their parents: no event is left
 * naming a person who was erased or a campaign that was deleted, also when the event was being
 * written while the person was erased.
 */
forEachEngine('events and the rows they name', (h) => {
  const notify = useNotify(h, { trackIpAddress: true });
  const db = () => notify().context.store.db as Kysely<Database>;
  const metadataOf = (m: unknown) => (typeof m === 'string' ? JSON.parse(m) : m);

  async function personWithSend(email: string) {
    const n = notify();
    const list = email.split('@')[0];
    const contact = await n.contacts.upsert({ email, lists: [list] });
    const campaign = await n.campaigns.create({ subject: 'Hi', html: '<p>Hi</p>', list });
    await n.campaigns.send(campaign.id);
    const send = await db().selectFrom('notify_sends').select(['id', 'token', 'campaign_id']).where('contact_id', '=', contact.id).executeTakeFirstOrThrow();
    return { contact: contact.id, send: Number(send.id), token: send.token, campaign: Number(send.campaign_id) };
  }

  const eventRow = (type: string, refs: { send_id?: number | null; contact_id?: number | null; campaign_id?: number | null }, metadata: Record<string, unknown> = {}) => ({
    type,
    send_id: refs.send_id ?? null,
    contact_id: refs.contact_id ?? null,
    campaign_id: refs.campaign_id ?? null,
    link_index: null,
    metadata: JSON.stringify(metadata),
    is_machine: 0,
    machine_reason: null,
    created_at: Date.now(),
  });

  test('deleting a draft campaign deletes the events that name it', async () => {
    const n = notify();
    const draft = await n.campaigns.create({ subject: 'Draft', text: 'x' });
    const kept = await n.campaigns.create({ subject: 'Kept', text: 'x' });
    await db()
      .insertInto('notify_events')
      .values([eventRow('open', { campaign_id: draft.id }), eventRow('click', { campaign_id: draft.id }), eventRow('open', { campaign_id: kept.id })])
      .execute();
    await n.campaigns.delete(draft.id);
    const left = await db().selectFrom('notify_events').select('campaign_id').where('campaign_id', 'in', [draft.id, kept.id]).execute();
    assert.deepEqual(
      left.map((e) => Number(e.campaign_id)),
      [kept.id],
    );
  });

  test('erase anonymises an event that names only the person (no send)', async () => {
    const n = notify();
    const ann = await n.contacts.upsert({ email: 'solo@example.com' });
    await db()
      .insertInto('notify_events')
      .values(eventRow('soft_bounce', { contact_id: ann.id }, { provider: 'ses', detail: 'solo@example.com mailbox full' }))
      .execute();
    assert.equal(await n.contacts.erase(ann.id), true);
    const rows = await db().selectFrom('notify_events').select(['contact_id', 'metadata']).where('type', '=', 'soft_bounce').execute();
    assert.deepEqual(
      rows.map((r) => [r.contact_id, metadataOf(r.metadata)]),
      [[null, {}]],
    );
  });

  test('erase waits for a tracking batch writing an open of the person: the open is anonymised too', async () => {
    const n = notify();
    const p = await personWithSend('inflight@example.com');
    let erased: Promise<boolean> | undefined;
    // what the tracking writer's transaction does: lock the send, insert the event with the contact it read
    await db()
      .transaction()
      .execute(async (trx) => {
        const send = await n.context.store.dialect
          .lockForUpdate(trx.selectFrom('notify_sends').select(['id', 'contact_id', 'campaign_id']).where('id', '=', p.send))
          .executeTakeFirstOrThrow();
        await trx
          .insertInto('notify_events')
          .values(eventRow('open', { send_id: p.send, contact_id: Number(send.contact_id), campaign_id: p.campaign }, { ip: '203.0.113.77' }))
          .execute();
        erased = n.contacts.erase(p.contact);
        await sleep(200);
      });
    assert.equal(await erased, true);
    const rows = await db().selectFrom('notify_events').select(['contact_id', 'metadata']).where('send_id', '=', p.send).execute();
    assert.deepEqual(
      rows.map((r) => [r.contact_id, metadataOf(r.metadata)]),
      [[null, {}]],
    );
  });

  // Another connection plays the erasure (contacts.ts): it locks the send and takes the person off
  // it, and commits only after the open's batch has started. The batch must wait for that commit
  // and then store the open as the send has it then: naming no one.
  test('an open written while an erasure holds its send waits for it and names no one', { skip: h.engine !== 'postgres' }, async () => {
    const n = notify();
    const p = await personWithSend('midway@example.com');
    const other = createStore(h.url);
    try {
      let flushed: Promise<void> | undefined;
      await other.db.transaction().execute(async (trx) => {
        await other.dialect.lockForUpdate(trx.selectFrom('notify_sends').select('id').where('id', '=', p.send)).execute();
        await trx.updateTable('notify_sends').set({ contact_id: null }).where('id', '=', p.send).execute();
        assert.equal((await n.fetch(new Request(`http://localhost/notify/open/${p.token}`))).status, 200);
        flushed = n.flush();
        await sleep(200);
      });
      await flushed;
    } finally {
      await other.close();
    }
    const rows = await db().selectFrom('notify_events').select(['type', 'contact_id']).where('send_id', '=', p.send).execute();
    assert.deepEqual(
      rows.map((r) => [r.type, r.contact_id]),
      [['open', null]],
    );
  });

  test('an open recorded after the erasure names no one', async () => {
    const n = notify();
    const p = await personWithSend('after@example.com');
    assert.equal(await n.contacts.erase(p.contact), true);
    const res = await n.fetch(new Request(`http://localhost/notify/open/${p.token}`));
    assert.equal(res.status, 200);
    await n.flush();
    const rows = await db().selectFrom('notify_events').select(['type', 'contact_id']).where('send_id', '=', p.send).execute();
    assert.deepEqual(
      rows.map((r) => [r.type, r.contact_id]),
      [['open', null]],
    );
  });

  test('an event written for a person erased meanwhile is not stored (webhook, unsubscribe writers)', async () => {
    const n = notify();
    const gone = await n.contacts.upsert({ email: 'gone@example.com' });
    assert.equal(await n.contacts.erase(gone.id), true);
    const stays = await n.contacts.upsert({ email: 'stays@example.com' });
    await n.context.store.transaction((tx) =>
      tx.events.insertMany([
        { ...eventRow('soft_bounce', { contact_id: gone.id }), metadata: { provider: 'ses' } },
        { ...eventRow('soft_bounce', { contact_id: stays.id }), metadata: { provider: 'ses' } },
      ]),
    );
    const rows = await db().selectFrom('notify_events').select('contact_id').where('contact_id', 'in', [gone.id, stays.id]).execute();
    assert.deepEqual(
      rows.map((r) => Number(r.contact_id)),
      [stays.id],
    );
  });

  test('an event writer in flight when the person is erased: its event is anonymised with the others', async () => {
    const n = notify();
    const ann = await n.contacts.upsert({ email: 'writer@example.com' });
    let erased: Promise<boolean> | undefined;
    await n.context.store.transaction(async (tx) => {
      await tx.events.insertMany([{ ...eventRow('soft_bounce', { contact_id: ann.id }), metadata: { provider: 'ses', detail: 'writer@example.com' } }]);
      erased = n.contacts.erase(ann.id);
      await sleep(200);
    });
    assert.equal(await erased, true);
    const rows = await db().selectFrom('notify_events').select(['contact_id', 'metadata']).where('type', '=', 'soft_bounce').where('created_at', '>', 0).execute();
    const dump = JSON.stringify(rows.map((r) => metadataOf(r.metadata)));
    assert.ok(!dump.includes('writer@example.com'), dump);
    assert.ok(
      rows.every((r) => r.contact_id !== ann.id),
      'no event names the erased id',
    );
  });
});
