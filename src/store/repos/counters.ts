import { type Kysely, sql } from 'kysely';
import type { CampaignCountersTable, Database } from '../schema.ts';

export type CounterName = Exclude<keyof CampaignCountersTable, 'campaign_id'>;
export type CounterDeltas = Partial<Record<CounterName, number>>;

const NAMES: CounterName[] = ['total', 'sent', 'failed', 'suppressed', 'opened', 'clicked', 'human_opened', 'human_clicked', 'bounced', 'complained', 'unsubscribed'];

/**
 * Per-campaign counters, so stats never scan notify_sends. Writers add deltas per flushed batch
 * (one upsert per campaign), not per event, to keep row-lock contention low.
 */
export interface CountersRepo {
  add(deltas: Map<number, CounterDeltas>, db?: Kysely<Database>): Promise<void>;
  get(campaignId: number): Promise<Record<CounterName, number>>;
}

export function createCountersRepo(db: Kysely<Database>): CountersRepo {
  return {
    async add(deltas, conn = db) {
      // Sorted by campaign so concurrent writers take row locks in the same order (no deadlocks).
      for (const [campaignId, d] of [...deltas.entries()].sort((a, b) => a[0] - b[0])) {
        const names = NAMES.filter((n) => d[n]);
        if (names.length === 0) continue;
        const values = { campaign_id: campaignId, ...Object.fromEntries(NAMES.map((n) => [n, d[n] ?? 0])) } as CampaignCountersTable;
        await conn
          .insertInto('notify_campaign_counters')
          .values(values)
          .onConflict((oc) =>
            oc.column('campaign_id').doUpdateSet(Object.fromEntries(names.map((n) => [n, sql`notify_campaign_counters.${sql.ref(n)} + ${d[n]}`]))),
          )
          .execute();
      }
    },
    async get(campaignId) {
      const row = await db.selectFrom('notify_campaign_counters').selectAll().where('campaign_id', '=', campaignId).executeTakeFirst();
      return Object.fromEntries(NAMES.map((n) => [n, Number(row?.[n] ?? 0)])) as Record<CounterName, number>;
    },
  };
}

/** Adds `d` into the map entry for `campaignId` (batch writers collect deltas with this). */
export function addDelta(into: Map<number, CounterDeltas>, campaignId: number | null | undefined, d: CounterDeltas): void {
  if (campaignId === null || campaignId === undefined) return;
  const cur = into.get(campaignId) ?? {};
  for (const [k, v] of Object.entries(d) as [CounterName, number][]) cur[k] = (cur[k] ?? 0) + v;
  into.set(campaignId, cur);
}
