import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { newToken } from '../../src/core/tokens.ts';
import { migrateToLatest } from '../../src/store/migrations/index.ts';
import { forEachEngine, useStore } from '../helpers/engines.ts';

const now = Date.UTC(2026, 0, 1);
const contact = (email: string, token = newToken()) => ({
  email,
  email_key: email.toLowerCase(),
  unsubscribe_token: token,
  initialStatus: 'subscribed' as const,
});

forEachEngine('store contract', (h) => {
  const store = useStore(h);

  test('migrations are versioned: a second run applies nothing', async () => {
    const again = await migrateToLatest(store().dialect);
    assert.deepEqual(again.applied, []);
  });

  test('email is unique case-insensitively: upsert updates the same row', async () => {
    const a = await store().contacts.upsert({ ...contact('Ann@Example.com'), name: 'Ann' }, now);
    const b = await store().contacts.upsert({ ...contact('ann@example.COM'), name: 'Ann B' }, now + 1);
    assert.equal(a.id, b.id);
    assert.equal(b.name, 'Ann B');
    assert.equal(b.email, 'Ann@Example.com', 'the first spelling is kept');
    assert.equal(b.unsubscribe_token, a.unsubscribe_token, 'the token never changes on update');
    const count = await store().db.selectFrom('notify_contacts').select(sql<number>`count(*)`.as('n')).where('email_key', '=', 'ann@example.com').executeTakeFirst();
    assert.equal(Number(count?.n), 1);
  });

  test('insertRows writes each row (nulls, JSON, numbers) inside the caller\'s transaction: a rollback leaves none', async () => {
    const s = store();
    const c = await s.contacts.upsert(contact('rows@example.com'), now);
    const send = await s.sends.create({ token: newToken(), contact_id: c.id, to_email: c.email, subject: 'S', status: 'sent' }, now);
    const columns = [
      { name: 'type', type: 'text' },
      { name: 'send_id', type: 'bigint' },
      { name: 'contact_id', type: 'bigint' },
      { name: 'campaign_id', type: 'bigint' },
      { name: 'link_index', type: 'integer' },
      { name: 'metadata', type: 'json' },
      { name: 'is_machine', type: 'smallint' },
      { name: 'machine_reason', type: 'text' },
      { name: 'created_at', type: 'bigint' },
    ] as const;
    const row = (i: number) => ({ type: 'click', send_id: send.id, contact_id: c.id, campaign_id: null, link_index: i, metadata: s.dialect.jsonRowValue({ ip: '192.0.2.1', n: i, note: "it's \"quoted\"" }), is_machine: i % 2, machine_reason: i % 2 ? 'link_burst' : null, created_at: now + i });
    const read = () => s.db.selectFrom('notify_events').selectAll().where('send_id', '=', send.id).orderBy('link_index').execute();
    await assert.rejects(
      s.dialect.writeTransaction(s.db, async (trx) => {
        await s.dialect.insertRows(trx, 'notify_events', columns, [row(0), row(1)]);
        assert.equal((await trx.selectFrom('notify_events').select('id').where('send_id', '=', send.id).execute()).length, 2, 'visible inside the transaction');
        throw new Error('abandoned');
      }),
      /abandoned/,
    );
    assert.equal((await read()).length, 0);
    // a row without machine_reason and with an undefined link_index: both NULL, on either engine
    const { machine_reason: _, ...partial } = row(3);
    await s.dialect.writeTransaction(s.db, (trx) => s.dialect.insertRows(trx, 'notify_events', columns, [...[0, 1, 2].map(row), { ...partial, link_index: undefined, created_at: now + 9 }]));
    await s.dialect.writeTransaction(s.db, (trx) => s.dialect.insertRows(trx, 'notify_events', columns, []));
    const all = await read();
    const odd = all.find((e) => Number(e.created_at) === now + 9);
    assert.equal(odd?.link_index, null);
    assert.equal(odd?.machine_reason, null);
    const stored = all.filter((e) => e !== odd);
    assert.deepEqual(
      stored.map((e) => ({ type: e.type, contact_id: Number(e.contact_id), campaign_id: e.campaign_id, link_index: Number(e.link_index), is_machine: Number(e.is_machine), machine_reason: e.machine_reason, created_at: Number(e.created_at) })),
      [0, 1, 2].map((i) => ({ type: 'click', contact_id: c.id, campaign_id: null, link_index: i, is_machine: i % 2, machine_reason: i % 2 ? 'link_burst' : null, created_at: now + i })),
    );
    assert.deepEqual(
      stored.map((e) => (typeof e.metadata === 'string' ? JSON.parse(e.metadata) : e.metadata)),
      [0, 1, 2].map((n) => ({ ip: '192.0.2.1', n, note: 'it\'s "quoted"' })),
    );
  });

  test('a raw insert of the same email key in another case is refused by the database', async () => {
    await store().contacts.upsert(contact('case@example.com'), now);
    await assert.rejects(
      store().db.insertInto('notify_contacts').values({ email: 'CASE@example.com', email_key: 'case@example.com', status: 'subscribed', unsubscribe_token: newToken(), attributes: '{}', created_at: now, updated_at: now }).execute(),
      (err) => store().dialect.isUniqueViolation(err),
    );
  });

  test('unsubscribe tokens are unique', async () => {
    const token = newToken();
    await store().contacts.upsert(contact('t1@example.com', token), now);
    await assert.rejects(store().contacts.upsert(contact('t2@example.com', token), now), (err) => store().dialect.isUniqueViolation(err));
    assert.equal(await store().contacts.getByEmailKey('t2@example.com'), undefined, 'nothing half-written');
  });

  test('concurrent upserts of one address make one contact', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => store().contacts.upsert({ ...contact("Race@example.com"), attributes: { [`k${i}`]: i } }, now)));
    assert.equal(new Set(results.map((r) => r.id)).size, 1);
  });

  test('send tokens are unique and one send row per campaign and contact', async () => {
    const db = store().db;
    const c = await store().contacts.upsert(contact('send@example.com'), now);
    const camp = await db.insertInto('notify_campaigns').values({ subject: 'Hi', status: 'draft', created_at: now }).returning('id').executeTakeFirstOrThrow();
    const row = (token: string) => ({ token, campaign_id: Number(camp.id), contact_id: c.id, to_email: c.email, subject: 'Hi', status: 'queued', created_at: now, updated_at: now });
    const token = newToken();
    await db.insertInto('notify_sends').values(row(token)).execute();
    await assert.rejects(db.insertInto('notify_sends').values(row(newToken())).execute(), (err) => store().dialect.isUniqueViolation(err), 'campaign+contact');
    const other = await store().contacts.upsert(contact('send2@example.com'), now);
    await assert.rejects(db.insertInto('notify_sends').values({ ...row(token), contact_id: other.id }).execute(), (err) => store().dialect.isUniqueViolation(err), 'token');
    // one-off sends (no campaign) do not collide with each other
    await db.insertInto('notify_sends').values({ ...row(newToken()), campaign_id: null }).execute();
    await db.insertInto('notify_sends').values({ ...row(newToken()), campaign_id: null }).execute();
  });

  test('lists are added on upsert and never duplicated', async () => {
    await store().contacts.upsert({ ...contact('lists@example.com'), lists: ['news', 'news', 'beta'] }, now);
    const c = await store().contacts.upsert({ ...contact('lists@example.com'), lists: ['news'] }, now);
    assert.deepEqual(c.lists, ['beta', 'news']);
  });

  test('erase keeps only a tombstone of the token', async () => {
    const c = await store().contacts.upsert(contact('gone@example.com'), now);
    assert.equal(await store().contacts.erase(c.id, 'h', now), true);
    assert.equal(await store().contacts.getById(c.id), undefined);
    assert.equal(await store().contacts.getByUnsubscribeToken(c.unsubscribe_token), undefined);
    const { hashToken } = await import('../../src/core/tokens.ts');
    assert.deepEqual(await store().contacts.tombstoneForToken(hashToken(c.unsubscribe_token)), { status: 'subscribed' });
  });

  test('meta getOrSet keeps the first value', async () => {
    assert.equal(await store().meta.getOrSet('k', 'a'), 'a');
    assert.equal(await store().meta.getOrSet('k', 'b'), 'a');
  });

  test('links keep their positions and a scope is written once', async () => {
    await store().links.ensureScope('c9', ['https://a.example/', 'https://b.example/'], now);
    await store().links.ensureScope('c9', ['https://changed.example/'], now);
    assert.deepEqual(await store().links.urlsForScope('c9'), ['https://a.example/', 'https://b.example/']);
    assert.deepEqual(await store().links.urlsForScope('c10'), []);
  });

  test('counters add deltas atomically under concurrency', async () => {
    const camp = await store().db.insertInto('notify_campaigns').values({ subject: 'C', status: 'draft', created_at: now }).returning('id').executeTakeFirstOrThrow();
    const id = Number(camp.id);
    await Promise.all(Array.from({ length: 20 }, () => store().counters.add(new Map([[id, { sent: 1, opened: 2 }]]))));
    const c = await store().counters.get(id);
    assert.equal(c.sent, 20);
    assert.equal(c.opened, 40);
    assert.equal(c.failed, 0);
  });

  test('enrollments page by sequence in id order, from a cursor id, optionally of one status', async () => {
    const seq = await store().sequences.create('paging', [{ delay_minutes: 0, subject: 'S', html: 'x', markdown: null, markdown_file: null, text: null, layout: null }], now);
    const other = await store().sequences.create('other', [{ delay_minutes: 0, subject: 'S', html: 'x', markdown: null, markdown_file: null, text: null, layout: null }], now);
    const people = await Promise.all(['p1', 'p2', 'p3'].map((p) => store().contacts.upsert(contact(`${p}@example.com`), now)));
    const made = [];
    for (const p of people) made.push(await store().enrollments.create({ sequence_id: seq.id, contact_id: p.id, next_send_at: now }, now));
    await store().enrollments.create({ sequence_id: other.id, contact_id: people[0].id, next_send_at: now }, now);
    await store().enrollments.cancelForContact(people[1].id, now);
    assert.deepEqual((await store().enrollments.page(seq.id, {}, 0, 10)).map((e) => e.id), made.map((e) => e.id));
    assert.deepEqual((await store().enrollments.page(seq.id, {}, made[0].id, 1)).map((e) => e.id), [made[1].id]);
    assert.deepEqual((await store().enrollments.page(seq.id, { status: 'cancelled' }, 0, 10)).map((e) => e.contact_id), [people[1].id]);
  });
});
