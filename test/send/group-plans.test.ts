import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { COUNTER_NAMES } from '../../src/core/storage/counters.ts';
import { createNotify, type Notify } from '../../src/notify.ts';
import { SEND_GROUP_COUNTERS } from '../../src/store/migrations/022_send_group_writes.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';

/**
 * PostgreSQL keeps a prepared statement's generic plan once it finds it no dearer than the plans
 * for actual parameters (from the sixth run on a connection). The send loop's group commit found
 * it while a campaign's first sends were all the table held: a scan of the whole table, kept for
 * the life of the connection with nothing to invalidate it while autovacuum is off, so every group
 * of a large run read every send row (bench scale, 100,000 sends: 855 -> 134 msg/s). The group
 * commits were planned on every run instead (store/fixed-statement.ts planEachRun); PostgreSQL's own
 * catalogue of the connection's prepared statements must hold none that updates notify_sends: a
 * prepared one may go generic whenever its costs say so. (A campaign of this size does not make
 * PostgreSQL switch; the 100,000-send bench did, after a few thousand sends: `npm run bench -- scale`.)
 * The campaign's group commit is now the function notify_send_group (migration 022), whose kept plan
 * is made with sequential scans off: after the campaigns here made it on a table of 300 sends, a
 * group of a campaign of 20,000 must still read notify_sends by index only.
 */
forEachEngine('group commits planned for the table as it is', (h) => {
  let sink: SmtpSink;
  let notify: Notify;
  before(async () => {
    sink = await startSmtpSink({ parse: false });
    // one connection: the statements the send loop ran are the ones this session's catalogue lists
    const url = new URL(h.url);
    url.searchParams.set('max', '1');
    notify = await createNotify(testOptions(h.engine === 'postgres' ? url.toString() : h.url, { mailer: sink.url }));
  });
  after(async () => {
    await notify.close();
    await sink.close();
  });

  test('two campaigns of 150 sends in groups (one with a segment): no statement that starts or finishes sends is kept as a prepared statement', { skip: h.engine !== 'postgres' && 'PostgreSQL plans' }, async () => {
    const db = notify.context.store.db;
    const now = Date.now();
    await sql`insert into notify_lists (name, created_at) values ('plans', ${now})`.execute(db);
    await sql`insert into notify_contacts (email, email_key, name, status, unsubscribe_token, created_at, updated_at)
      select 'p' || g || '@example.com', 'p' || g || '@example.com', 'P' || g, 'subscribed', 'plans-token-' || lpad(g::text, 10, '0'), ${now}, ${now} from generate_series(1, 150) g`.execute(db);
    await sql`insert into notify_list_members (list_id, contact_id, created_at)
      select l.id, c.id, ${now} from notify_lists l, notify_contacts c where l.name = 'plans' and c.email like 'p%@example.com'`.execute(db);
    // the second with a segment every member matches: its group commit is a text made per run
    const send = async (segment?: { attr: string; ne: string }) => {
      const c = await notify.campaigns.create({ subject: 'Plans', html: '<p>Hi</p>', list: 'plans', segment });
      for (let i = 0; i < 5; i++) if ((await notify.campaigns.send(c.id)).done) break;
    };
    await send();
    await send({ attr: 'plan', ne: 'free' });
    assert.equal(sink.messages.length, 300, 'every member got each message');

    const { rows } = await sql<{ statement: string; generic_plans: string; custom_plans: string }>`
      select statement, generic_plans, custom_plans from pg_prepared_statements where statement like '%update notify_sends%'`.execute(db);
    const kept = rows.map((r) => `${r.generic_plans} generic / ${r.custom_plans} custom runs: ${r.statement.slice(0, 80)}`);
    assert.deepEqual(kept, [], 'a statement updating notify_sends is prepared, so PostgreSQL may keep a generic plan for it');
  });
  test('the kept plan of the group commit reads sends by index, though made on a table of 300 sends', { skip: h.engine !== 'postgres' && 'PostgreSQL plans' }, async () => {
    const db = notify.context.store.db;
    const now = Date.now();
    const c = await notify.campaigns.create({ subject: 'Large', html: '<p>Hi</p>', list: 'plans' });
    await sql`update notify_campaigns set status = 'sending' where id = ${c.id}`.execute(db);
    // 20,000 claimed sends of the new campaign (contacts need not exist for a finish)
    await sql`insert into notify_sends (token, campaign_id, to_email, subject, status, created_at, updated_at, attempts)
      select 'large-' || g, ${c.id}, 'l' || g || '@example.com', 'Large', case when g <= 10 then 'sending' else 'queued' end, ${now}, ${now}, 0 from generate_series(1, 20000) g`.execute(db);
    const { rows: ids } = await sql<{ id: string }>`select id from notify_sends where campaign_id = ${c.id} and status = 'sending' order by id`.execute(db);
    const outcomes = ids.map((r) => ({ id: Number(r.id), status: 'sent', message_id: `<m${r.id}@example.com>`, sent_at: now, updated_at: now }));
    const scans = await db.transaction().execute(async (trx) => {
      // before and after the call: PostgreSQL 15+ also shows, in the transaction's view, counts of
      // earlier transactions on this connection not yet flushed to the shared statistics
      const counts = async () => (await sql<{ seq_scan: string; idx_scan: string }>`select seq_scan, idx_scan from pg_stat_xact_user_tables where relid = 'notify_sends'::regclass`.execute(trx)).rows[0];
      const before = await counts();
      await sql`select * from notify_send_group(${now}, ${[]}::bigint[], ${c.id}, ${JSON.stringify(outcomes)}::jsonb, ${outcomes.map((o) => o.id)}::bigint[], ${COUNTER_NAMES.map((n) => (n === 'sent' ? outcomes.length : 0))}::bigint[], true)`.execute(trx);
      const after = await counts();
      return { seq_scan: Number(after?.seq_scan) - Number(before?.seq_scan), idx_scan: Number(after?.idx_scan) - Number(before?.idx_scan) };
    });
    assert.equal(scans.seq_scan, 0, 'the group commit scanned the whole sends table');
    assert.ok(scans.idx_scan > 0);
    const { rows } = await sql<{ n: string }>`select count(*) as n from notify_sends where campaign_id = ${c.id} and status = 'sent'`.execute(db);
    assert.equal(Number(rows[0]?.n), 10, 'the ten outcomes are on their rows');
  });

  test('the kept plan of the drip group commit reads sends by index, though made on a table of 300 sends', { skip: h.engine !== 'postgres' && 'PostgreSQL plans' }, async () => {
    const db = notify.context.store.db;
    const now = Date.now();
    // a drip run on this connection first: notify_step_group's plan is made now, on the small table
    await notify.drips.createSequence({ name: 'plans', steps: [{ delayMinutes: 0, subject: 'Step', html: '<p>Hi</p>' }] });
    for (const email of ['p1@example.com', 'p2@example.com']) await notify.drips.enroll({ contact: email, sequence: 'plans' });
    assert.equal((await notify.drips.process()).sent, 2);
    await sql`insert into notify_sends (token, to_email, subject, status, created_at, updated_at, attempts)
      select 'steps-' || g, 's' || g || '@example.com', 'Step', case when g <= 10 then 'sending' else 'queued' end, ${now}, ${now}, 0 from generate_series(1, 20000) g`.execute(db);
    const { rows: ids } = await sql<{ id: string }>`select id from notify_sends where token like 'steps-%' and status = 'sending' order by id`.execute(db);
    const outcomes = ids.map((r) => ({ id: Number(r.id), status: 'sent', message_id: `<s${r.id}@example.com>`, sent_at: now, updated_at: now }));
    const scans = await db.transaction().execute(async (trx) => {
      const counts = async () => (await sql<{ seq_scan: string; idx_scan: string }>`select seq_scan, idx_scan from pg_stat_xact_user_tables where relid = 'notify_sends'::regclass`.execute(trx)).rows[0];
      const before = await counts();
      await sql`select * from notify_step_group(${now}, '[]'::jsonb, ${[]}::bigint[], ${JSON.stringify(outcomes)}::jsonb, ${outcomes.map((o) => o.id)}::bigint[], '[]'::jsonb, ${[]}::bigint[])`.execute(trx);
      const after = await counts();
      return { seq_scan: Number(after?.seq_scan) - Number(before?.seq_scan), idx_scan: Number(after?.idx_scan) - Number(before?.idx_scan) };
    });
    assert.equal(scans.seq_scan, 0, 'the drip group commit scanned the whole sends table');
    assert.ok(scans.idx_scan > 0);
    const { rows } = await sql<{ n: string }>`select count(*) as n from notify_sends where token like 'steps-%' and status = 'sent'`.execute(db);
    assert.equal(Number(rows[0]?.n), 10, 'the ten outcomes are on their rows');
  });

  test('the group commit function adds the counters in COUNTER_NAMES order', () => {
    assert.deepEqual([...SEND_GROUP_COUNTERS], [...COUNTER_NAMES], 'a counter was added or moved: replace notify_send_group in a new migration');
  });
});
