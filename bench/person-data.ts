/**
 * A person's export and erasure at ~1,000,000 events: their events found by contact alone
 * (notify_events_contact) against the condition before migration 019, `contact_id = ? or send_id
 * in (their sends)`, which the store still uses while 019's backfill is pending (so both run on
 * the same data in the same run, interleaved). Prints each one's median and the plans.
 * `npx tsx bench/person-data.ts` (BENCH_PERSON_EVENTS to change the size).
 */
import { performance } from 'node:perf_hooks';
import { type Kysely, sql } from 'kysely';
import { createNotify, type Notify } from '../src/notify.ts';
import { BACKFILL_KEY } from '../src/store/migrations/019_events_contact_from_send.ts';
import type { Database } from '../src/store/schema.ts';
import { benchDatabase, type Engine, postgresAvailable } from './lib/db.ts';

const EVENTS = Number(process.env.BENCH_PERSON_EVENTS) || 1_000_000;
const SENDS = EVENTS / 10;
const PEOPLE = SENDS / 10;
const ROUNDS = 5;
const T0 = Date.UTC(2026, 0, 1);

for (const engine of ['sqlite', 'postgres'] as Engine[]) {
  if (engine === 'postgres' && !(await postgresAvailable())) {
    console.log('postgres: skipped (no server)');
    continue;
  }
  const target = benchDatabase(engine);
  const notify = await createNotify({ database: target.url, configFile: false, envFile: false, env: {}, logLevel: 'silent', mailer: 'log' });
  try {
    const db = notify.context.store.db as Kysely<Database>;
    const t = performance.now();
    await seed(db, engine);
    if (engine === 'postgres') await sql`analyze`.execute(db);
    console.log(`${engine}: ${EVENTS.toLocaleString('en-US')} events, ${SENDS.toLocaleString('en-US')} sends, ${PEOPLE.toLocaleString('en-US')} people, seeded in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    await plans(db, engine);
    const times = { exportBefore: [] as number[], exportAfter: [] as number[], eraseBefore: [] as number[], eraseAfter: [] as number[] };
    for (let r = 0; r < ROUNDS; r++) {
      // each erasure takes a person of its own, each with 10 sends and 100 events
      times.exportBefore.push(await timed(db, true, () => exported(notify, 1 + r)));
      times.exportAfter.push(await timed(db, false, () => exported(notify, 1 + r)));
      times.eraseBefore.push(await timed(db, true, () => notify.contacts.erase(100 + r)));
      times.eraseAfter.push(await timed(db, false, () => notify.contacts.erase(200 + r)));
    }
    for (const [name, values] of Object.entries(times)) console.log(`  ${name.padEnd(12)} median ${median(values).toFixed(2)} ms  (${values.map((v) => v.toFixed(1)).join(', ')})`);
  } finally {
    await notify.close();
    await target.drop();
  }
}

async function exported(notify: Notify, id: number): Promise<void> {
  const data = await notify.contacts.export(id);
  if (data?.events.length !== 100) throw new Error(`person ${id}: ${data?.events.length} events, expected 100`);
}

/** `before`: with 019's backfill marked pending, the store takes the condition it replaced. */
async function timed(db: Kysely<Database>, before: boolean, fn: () => Promise<unknown>): Promise<number> {
  if (before) await db.insertInto('notify_meta').values({ key: BACKFILL_KEY, value: JSON.stringify({ after: 0, upTo: 0 }) }).execute();
  try {
    const t = performance.now();
    await fn();
    return performance.now() - t;
  } finally {
    await db.deleteFrom('notify_meta').where('key', '=', BACKFILL_KEY).execute();
  }
}

/** People 1..PEOPLE, sends 1..SENDS (send s to person s mod PEOPLE), events 1..EVENTS (event e of send e mod SENDS). */
async function seed(db: Kysely<Database>, engine: Engine): Promise<void> {
  const big = (v: number) => sql`cast(${v} as bigint)`;
  const series = (n: number, select: ReturnType<typeof sql>, into: ReturnType<typeof sql>) =>
    engine === 'postgres'
      ? sql`${into} ${select} from generate_series(1, ${n}) as g(n)`
      : sql`with recursive seq(n) as (select 1 union all select n + 1 from seq where n < ${n}) ${into} ${select} from seq`;
  await series(
    PEOPLE,
    sql`select 'p' || n || '@example.com', 'p' || n || '@example.com', 'subscribed', 'tok' || n, '{}', ${big(T0)}, ${big(T0)}`,
    sql`insert into notify_contacts (email, email_key, status, unsubscribe_token, attributes, created_at, updated_at)`,
  ).execute(db);
  await series(
    SENDS,
    sql`select 'bench' || n, 1 + (n - 1) % ${PEOPLE}, 'p' || (1 + (n - 1) % ${PEOPLE}) || '@example.com', 'Hello', 'sent', ${big(T0)}, ${big(T0)}, ${big(T0)}`,
    sql`insert into notify_sends (token, contact_id, to_email, subject, status, created_at, updated_at, sent_at)`,
  ).execute(db);
  await series(
    EVENTS,
    sql`select case when n % 4 = 0 then 'click' else 'open' end, 1 + (n - 1) % ${SENDS}, 1 + (n - 1) % ${PEOPLE}, '{"ip":"203.0.113.9"}', 0, ${big(T0)} + n`,
    sql`insert into notify_events (type, send_id, contact_id, metadata, is_machine, created_at)`,
  ).execute(db);
}

/** The plans of the person's events, by contact alone and by the condition before, and of the sends that left someone out. */
async function plans(db: Kysely<Database>, engine: Engine): Promise<void> {
  const byContact = db.selectFrom('notify_events').selectAll().where('contact_id', '=', 7).orderBy('id').compile();
  const before = db
    .selectFrom('notify_events')
    .selectAll()
    .where((eb) => eb.or([eb('contact_id', '=', 7), eb('send_id', 'in', eb.selectFrom('notify_sends').select('id').where('contact_id', '=', 7))]))
    .orderBy('id')
    .compile();
  const anonymise = db.updateTable('notify_events').set({ metadata: '{}', contact_id: null }).where('contact_id', '=', 7).compile();
  const leftOut = db.selectFrom('notify_sends').select(['id', 'suppressed_recipients']).where('suppressed_recipients', 'is not', null).compile();
  for (const [name, q] of [
    ['export, by contact', byContact],
    ['erase, by contact', anonymise],
    ['erase, sends that left someone out', leftOut],
    ['export, before', before],
  ] as const) {
    // PostgreSQL runs the reads (rows and buffers read show what load does not distort); never the UPDATE
    const explain = engine === 'postgres' ? `explain ${name.startsWith('erase, by') ? '' : '(analyze, buffers) '}${q.sql}` : `explain query plan ${q.sql}`;
    const { rows } = await db.executeQuery<Record<string, unknown>>({ ...q, sql: explain, query: q.query, queryId: q.queryId });
    const lines = rows.map((r) => String(r['QUERY PLAN'] ?? r.detail));
    console.log(`  plan ${name}:\n    ${lines.join('\n    ')}`);
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}
