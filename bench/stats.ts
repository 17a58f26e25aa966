/**
 * getCampaignStats at 1,000,000 send rows (used by bench/campaign-stats.ts). Rows are seeded with
 * one bulk INSERT ... SELECT (generate_series on PostgreSQL, a recursive CTE on SQLite); the
 * counters row is then filled by one scan, exactly the figures the dispatcher and the event
 * recorder maintain in their batched writes. The baseline is what the counters replace: the same
 * five figures computed by an indexed scan of the campaign's send rows.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { type Kysely, sql } from 'kysely';
import { createNotify, type Notify } from '../src/notify.ts';
import type { Database } from '../src/store/schema.ts';

export interface StatsBenchResult {
  engine: 'sqlite' | 'postgres';
  rows: number;
  seedMs: number;
  /** getCampaignStats through the public API: the median over rounds of each round's median call */
  medianMs: number;
  p99Ms: number;
  /** the indexed scan it replaces, median over rounds */
  scanMedianMs: number;
  goalMs: number;
}

const GOAL_MS = 1;
const T0 = Date.UTC(2026, 0, 1);

/**
 * Seeds `rows` send rows, then `rounds` interleaved rounds of one indexed scan and `calls`
 * getCampaignStats calls. `around` wraps the timed rounds (bench/lib/guard.ts).
 */
export async function benchStats(engine: 'sqlite' | 'postgres', rows = 1_000_000, calls = 2000, rounds = 5, around: (timed: () => Promise<void>) => Promise<void> = (t) => t()): Promise<StatsBenchResult> {
  const { url, cleanup } = database(engine);
  const notify = await createNotify({ database: url, configFile: false, env: {}, logLevel: 'silent', mailer: 'log' });
  try {
    const db = notify.context.store.db;
    const camp = await db.insertInto('notify_campaigns').values({ subject: 'Bench', status: 'sent', created_at: T0 }).returning('id').executeTakeFirstOrThrow();
    const id = Number(camp.id);
    const seedStart = performance.now();
    await seed(db, engine, id, rows);
    await fillCounters(db, id);
    const seedMs = performance.now() - seedStart;
    if (engine === 'postgres') await sql`analyze`.execute(db);

    const expected = await scan(db, id);
    const got = await notify.campaigns.getCampaignStats(id);
    if (JSON.stringify(got) !== JSON.stringify(expected)) throw new Error(`counters ${JSON.stringify(got)} != scan ${JSON.stringify(expected)}`);

    for (let i = 0; i < 200; i++) await notify.campaigns.getCampaignStats(id); // warm-up
    const scans: number[] = [];
    const callMedians: number[] = [];
    const all: number[] = [];
    await around(async () => {
      for (let r = 0; r < rounds; r++) {
        const t = performance.now();
        await scan(db, id);
        scans.push(performance.now() - t);
        const times = await timeCalls(notify, id, calls);
        callMedians.push(pct(times, 0.5));
        all.push(...times);
      }
    });
    return { engine, rows, seedMs, medianMs: pct(callMedians, 0.5), p99Ms: pct(all, 0.99), scanMedianMs: pct(scans, 0.5), goalMs: GOAL_MS };
  } finally {
    await notify.context.store.dialect.destroyData();
    await notify.close();
    cleanup();
  }
}

async function seed(db: Kysely<Database>, engine: 'sqlite' | 'postgres', campaignId: number, rows: number): Promise<void> {
  // 1 in 50 failed, 1 in 3 opened, 1 in 10 clicked; no contact rows needed (contact_id may be null).
  const big = (v: number) => sql`cast(${v} as bigint)`;
  const select = sql`
    select 'bench' || n, ${big(campaignId)}, 'r' || n || '@example.com', 'Bench',
           case when n % 50 = 0 then 'failed' else 'sent' end, ${big(T0)}, ${big(T0)}, ${big(T0)},
           case when n % 3 = 0 and n % 50 <> 0 then ${big(T0 + 60_000)} end,
           case when n % 10 = 0 and n % 50 <> 0 then ${big(T0 + 120_000)} end`;
  const into = sql`insert into notify_sends (token, campaign_id, to_email, subject, status, created_at, updated_at, sent_at, opened_at, clicked_at)`;
  if (engine === 'postgres') await sql`${into} ${select} from generate_series(1, ${rows}) as g(n)`.execute(db);
  else await sql`with recursive seq(n) as (select 1 union all select n + 1 from seq where n < ${rows}) ${into} ${select} from seq`.execute(db);
}

/** The five figures by scanning the campaign's send rows (what the counters make unnecessary). */
async function scan(db: Kysely<Database>, campaignId: number) {
  const { rows } = await sql<Record<string, number>>`
    select count(*) as total,
           sum(case when status = 'sent' then 1 else 0 end) as sent,
           sum(case when status = 'failed' then 1 else 0 end) as failed,
           count(opened_at) as opened, count(clicked_at) as clicked
    from notify_sends where campaign_id = ${campaignId}`.execute(db);
  const r = rows[0];
  return { total: Number(r.total), sent: Number(r.sent), failed: Number(r.failed), opened: Number(r.opened), clicked: Number(r.clicked) };
}

async function fillCounters(db: Kysely<Database>, campaignId: number): Promise<void> {
  const s = await scan(db, campaignId);
  await db
    .insertInto('notify_campaign_counters')
    .values({ campaign_id: campaignId, ...s, suppressed: 0, human_opened: s.opened, human_clicked: s.clicked, bounced: 0, complained: 0, unsubscribed: 0 })
    .execute();
}

async function timeCalls(notify: Notify, id: number, calls: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t = performance.now();
    await notify.campaigns.getCampaignStats(id);
    times.push(performance.now() - t);
  }
  return times;
}

function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

function database(engine: 'sqlite' | 'postgres'): { url: string; cleanup: () => void } {
  if (engine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'notify-bench-'));
    return { url: `sqlite:${join(dir, 'bench.db')}`, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
  }
  const base = process.env.NOTIFY_BENCH_PG_URL ?? process.env.NOTIFY_TEST_PG_URL!;
  return { url: `${base}${base.includes('?') ? '&' : '?'}schema=bench_stats_${process.pid}`, cleanup: () => {} };
}
