import { type Kysely, sql } from 'kysely';
import { COUNTER_NAMES as COUNTERS, type CounterValues } from '../../core/storage/counters.ts';
import type { CampaignWithCounters, StatsRepo } from '../../core/storage/stats.ts';
import type { Database } from '../schema.ts';

export function createStatsRepo(db: Kysely<Database>): StatsRepo {
  const withCounters = () =>
    db
      .selectFrom('notify_campaigns as c')
      .leftJoin('notify_campaign_counters as k', 'k.campaign_id', 'c.id')
      .select(['c.id', 'c.name', 'c.subject', 'c.status', 'c.created_at', 'c.sent_at'])
      .select(COUNTERS.map((n) => `k.${n}` as const));
  return {
    async getCampaign(campaignId) {
      const row = await withCounters().where('c.id', '=', campaignId).executeTakeFirst();
      return row && toCampaign(row);
    },
    async listCampaigns(limit, offset, status) {
      let query = withCounters();
      if (status !== undefined) query = query.where('c.status', '=', status);
      const rows = await query.orderBy('c.id', 'desc').limit(limit).offset(offset ?? 0).execute();
      return rows.map(toCampaign);
    },
    async linkClicks(campaignId) {
      const { rows } = await sql<{ idx: number; url: string | null; clicks: number; uniq: number; human: number }>`
        select e.link_index as idx, l.url as url, count(*) as clicks, count(distinct e.send_id) as uniq,
               sum(case when e.is_machine = 0 then 1 else 0 end) as human
        from notify_events e
        left join notify_links l on l.scope = ${`c${campaignId}`} and l.position = e.link_index
        where e.campaign_id = ${campaignId} and e.type = 'click' and e.link_index is not null
        group by e.link_index, l.url
        order by e.link_index`.execute(db);
      return rows.map((r) => ({ index: Number(r.idx), url: r.url, clicks: Number(r.clicks), unique: Number(r.uniq), human: Number(r.human ?? 0) }));
    },
    async engagementRange(campaignId) {
      const row = await db
        .selectFrom('notify_events')
        .select((eb) => [eb.fn.min('created_at').as('first'), eb.fn.max('created_at').as('last')])
        .where('campaign_id', '=', campaignId)
        .where('type', 'in', ['open', 'click'])
        .executeTakeFirst();
      if (row?.first === null || row?.first === undefined) return undefined;
      return { first: Number(row.first), last: Number(row.last) };
    },
    async timeline(campaignId, from, to, bucketMs) {
      // Integer division on both engines (bigint on PostgreSQL, integer on SQLite); group by position
      // because PostgreSQL sees the parameterised expression in select and group by as different.
      const { rows } = await sql<{ b: number; type: 'open' | 'click'; m: number; n: number }>`
        select created_at / cast(${bucketMs} as bigint) as b, type, is_machine as m, count(*) as n
        from notify_events
        where campaign_id = ${campaignId} and type in ('open', 'click') and created_at >= ${from} and created_at < ${to}
        group by 1, 2, 3
        order by 1`.execute(db);
      return rows.map((r) => ({ start: Number(r.b) * bucketMs, type: r.type, machine: Number(r.m) !== 0, events: Number(r.n) }));
    },
    async machineReasons(campaignId) {
      const rows = await db
        .selectFrom('notify_events')
        .select((eb) => ['type', 'machine_reason', eb.fn.countAll().as('n')])
        .where('campaign_id', '=', campaignId)
        .where('type', 'in', ['open', 'click'])
        .where('is_machine', '<>', 0)
        .groupBy(['type', 'machine_reason'])
        .orderBy('n', 'desc')
        .execute();
      return rows.map((r) => ({ type: r.type, reason: r.machine_reason ?? 'unknown', events: Number(r.n) }));
    },
    async sequences() {
      const seqs = await db
        .selectFrom('notify_sequences as s')
        .select((eb) => ['s.id', 's.name', eb.selectFrom('notify_steps as t').whereRef('t.sequence_id', '=', 's.id').select(eb.fn.countAll().as('n')).as('steps')])
        .orderBy('s.id', 'desc')
        .execute();
      const counts = await db.selectFrom('notify_enrollments').select((eb) => ['sequence_id', 'status', eb.fn.countAll().as('n')]).groupBy(['sequence_id', 'status']).execute();
      return seqs.map((s) => {
        const enrollments: Record<string, number> = {};
        for (const c of counts) if (Number(c.sequence_id) === Number(s.id)) enrollments[c.status] = Number(c.n);
        return { id: Number(s.id), name: s.name, steps: Number(s.steps ?? 0), enrollments };
      });
    },
  };
}

function toCampaign(row: Record<string, unknown>): CampaignWithCounters {
  const counters = Object.fromEntries(COUNTERS.map((n) => [n, Number(row[n] ?? 0)])) as CounterValues;
  return {
    id: Number(row.id),
    name: (row.name as string | null) ?? null,
    subject: String(row.subject),
    status: String(row.status),
    created_at: Number(row.created_at),
    sent_at: row.sent_at === null || row.sent_at === undefined ? null : Number(row.sent_at),
    counters,
  };
}
