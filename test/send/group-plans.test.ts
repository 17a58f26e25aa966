import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { createNotify, type Notify } from '../../src/notify.ts';
import { forEachEngine, testOptions } from '../helpers/engines.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';

/**
 * PostgreSQL keeps a prepared statement's generic plan once it finds it no dearer than the plans
 * for actual parameters (from the sixth run on a connection). The send loop's group commit found
 * it while a campaign's first sends were all the table held: a scan of the whole table, kept for
 * the life of the connection with nothing to invalidate it while autovacuum is off, so every group
 * of a large run read every send row (bench scale, 100,000 sends: 855 -> 134 msg/s). The group
 * commits are planned on every run instead (store/fixed-statement.ts planEachRun). PostgreSQL's own
 * catalogue of the connection's prepared statements must hold none that updates notify_sends:
 * a prepared one may go generic whenever its costs say so. (A campaign of this size does not make
 * PostgreSQL switch; the 100,000-send bench did, after a few thousand sends: `npm run bench -- scale`.)
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
});
