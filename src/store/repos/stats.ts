import type { Kysely } from 'kysely';
import { COUNTER_NAMES as COUNTERS, type CounterValues } from '../../core/storage/counters.ts';
import type { CampaignWithCounters, StatsRepo } from '../../core/storage/stats.ts';
import type { Database } from '../schema.ts';
import { createEngagementStats } from './engagement-stats.ts';

export function createStatsRepo(db: Kysely<Database>): StatsRepo {
  const withCounters = () =>
    db
      .selectFrom('notify_campaigns as c')
      .leftJoin('notify_campaign_counters as k', 'k.campaign_id', 'c.id')
      .select(['c.id', 'c.name', 'c.subject', 'c.status', 'c.created_at', 'c.sent_at'])
      .select(COUNTERS.map((n) => `k.${n}` as const));
  return {
    ...createEngagementStats(db),
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
