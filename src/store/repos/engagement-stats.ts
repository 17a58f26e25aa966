import { type Kysely, sql } from 'kysely';
import type { StatsRepo } from '../../core/storage/stats.ts';
import type { Database } from '../schema.ts';

/** The queries over a campaign's stored opens and clicks: per link, over time, machine-labelled by reason. */
export function createEngagementStats(db: Kysely<Database>): Pick<StatsRepo, 'linkClicks' | 'engagementRange' | 'timeline' | 'machineReasons'> {
  return {
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
  };
}
