import { sql } from 'kysely';
import { preparedForms } from '../src/store/fixed-statement.ts';
import { createStore } from '../src/store/index.ts';
import { backendsOf, cpuMicros } from './lib/cpu.ts';
import { PG_URL } from './lib/db.ts';

/**
 * The send loop's group commit alone on PostgreSQL: latency and CPU of the backend per group write
 * (3 starts and the 3 outcomes before them, as a 5-slot pool mostly writes), with the fixed
 * statements prepared per connection (as notify runs them) or not. Not part of `npm run bench`: a
 * tool for comparing versions of the group write.
 *   npx tsx bench/group-write.ts [sends=3000] [prepared|unprepared]
 */
const [n = '3000', mode = 'prepared'] = process.argv.slice(2);
// every text looks unknown to the connections' query hook: each run parsed and planned again
if (mode === 'unprepared') preparedForms.add = () => preparedForms;
const store = createStore(`${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=group_write_${process.pid}&max=1`);
const GROUP = 3;
try {
  await store.migrate();
  const now = Date.now();
  await sql`insert into notify_contacts (email, email_key, name, status, unsubscribe_token, attributes, created_at, updated_at)
    select 'g' || n || '@example.com', 'g' || n || '@example.com', 'R', 'subscribed', md5('u' || n), '{}', ${now}, ${now} from generate_series(1, ${Number(n)}) as g(n)`.execute(store.db);
  const c = await sql<{ id: number }>`insert into notify_campaigns (name, subject, html, status, created_at) values ('g', 's', 'h', 'sending', ${now}) returning id`.execute(store.db);
  const campaignId = Number(c.rows[0].id);
  await sql`insert into notify_sends (token, campaign_id, contact_id, to_email, subject, status, attempts, created_at, updated_at)
    select md5('t' || id), ${campaignId}, id, email, 's', 'queued', 0, ${now}, ${now} from notify_contacts`.execute(store.db);
  await sql`analyze`.execute(store.db);
  const ids = (await sql<{ id: number }>`select id from notify_sends order by id`.execute(store.db)).rows.map((r) => Number(r.id));
  const backends = await backendsOf(process.pid, PG_URL);
  const before = backends.map(cpuMicros);
  const t0 = performance.now();
  let groups = 0;
  for (let i = 0; i < ids.length; i += GROUP, groups++) {
    const done = ids.slice(Math.max(0, i - GROUP), i);
    const outcomes = done.map((id) => ({ id, status: 'sent' as const, message_id: `<${id}@example.com>` }));
    await store.campaigns.writeSendGroup(campaignId, { start: ids.slice(i, i + GROUP), outcomes, counts: { sent: done.length } }, Date.now());
  }
  const ms = performance.now() - t0;
  const backendUs = backends.reduce((a, p, i) => a + cpuMicros(p) - before[i], 0);
  console.log(`${mode}: ${groups} group writes of ${GROUP}: ${(ms / groups).toFixed(2)} ms each, backend CPU ${(backendUs / groups).toFixed(0)} us per group (10 ms ticks)`);
} finally {
  await store.dialect.destroyData();
}
