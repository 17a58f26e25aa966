import { type Kysely, sql } from 'kysely';
import { COUNTER_NAMES as NAMES, type CounterValues, type CountersRepo } from '../../core/storage/counters.ts';
import type { CampaignCountersTable, Database } from '../schema.ts';

export function createCountersRepo(db: Kysely<Database>): CountersRepo {
  return {
    async add(deltas) {
      // Sorted by campaign so concurrent writers take row locks in the same order (no deadlocks).
      for (const [campaignId, d] of [...deltas.entries()].sort((a, b) => a[0] - b[0])) {
        const names = NAMES.filter((n) => d[n]);
        if (names.length === 0) continue;
        const values = { campaign_id: campaignId, ...Object.fromEntries(NAMES.map((n) => [n, d[n] ?? 0])) } as CampaignCountersTable;
        await db
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
      return Object.fromEntries(NAMES.map((n) => [n, Number(row?.[n] ?? 0)])) as CounterValues;
    },
  };
}

