import type { Kysely } from 'kysely';
import { COUNTER_NAMES as NAMES, type CounterValues, type CountersRepo } from '../../core/storage/counters.ts';
import { fixedStatement } from '../fixed-statement.ts';
import type { Database } from '../schema.ts';

/** the insert's rows (campaign id, then every counter) are added to a campaign's counters */
export const ADD_ON_CONFLICT = `on conflict (campaign_id) do update set ${NAMES.map((n) => `${n} = notify_campaign_counters.${n} + excluded.${n}`).join(', ')}`;
/** one text for every mix of counters (adding 0 changes nothing): the send loop runs it once per group commit */
export const ADD_COUNTS = `insert into notify_campaign_counters (campaign_id, ${NAMES.join(', ')}) values (?${', ?'.repeat(NAMES.length)}) ${ADD_ON_CONFLICT}`;
const addCounts = fixedStatement(ADD_COUNTS);

export function createCountersRepo(db: Kysely<Database>): CountersRepo {
  return {
    async add(deltas) {
      // Sorted by campaign so concurrent writers take row locks in the same order (no deadlocks).
      for (const [campaignId, d] of [...deltas.entries()].sort((a, b) => a[0] - b[0])) {
        if (!NAMES.some((n) => d[n])) continue;
        await addCounts(db, [campaignId, ...NAMES.map((n) => d[n] ?? 0)]);
      }
    },
    async get(campaignId) {
      const row = await db.selectFrom('notify_campaign_counters').selectAll().where('campaign_id', '=', campaignId).executeTakeFirst();
      return Object.fromEntries(NAMES.map((n) => [n, Number(row?.[n] ?? 0)])) as CounterValues;
    },
  };
}

