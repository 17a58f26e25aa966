import type { Kysely } from 'kysely';
import type { SendsRepo } from '../../core/storage/sends.ts';
import type { Database } from '../schema.ts';

/** Sends taken back: one for another try, one or all stale ones as interrupted. */
export function createSendRetakes(db: Kysely<Database>): Pick<SendsRepo, 'retake' | 'interrupt' | 'failStale'> {
  return {
    async retake(id, now) {
      const res = await db
        .updateTable('notify_sends')
        .set({ status: 'queued', error: null, next_attempt_at: null, updated_at: now })
        .where('id', '=', id)
        .where((eb) => eb.or([eb('status', '=', 'deferred'), eb.and([eb('status', '=', 'failed'), eb.or([eb('error', 'is', null), eb('error', '<>', 'interrupted')])])]))
        .executeTakeFirst();
      return Number(res.numUpdatedRows) === 1;
    },
    async interrupt(id, olderThan, now) {
      const res = await db
        .updateTable('notify_sends')
        .set({ status: 'failed', error: 'interrupted', updated_at: now })
        .where('id', '=', id)
        .where('status', 'in', ['queued', 'sending'])
        .where('updated_at', '<', olderThan)
        .executeTakeFirst();
      return Number(res.numUpdatedRows) === 1;
    },
    async failStale(olderThan, now, campaignId) {
      let q = db
        .updateTable('notify_sends')
        .set({ status: 'failed', error: 'interrupted', updated_at: now })
        .where('status', '=', 'sending')
        .where('updated_at', '<', olderThan);
      if (campaignId !== undefined) q = q.where('campaign_id', '=', campaignId);
      const rows = await q.returning(['id', 'campaign_id']).execute();
      return rows.map((r) => ({ id: Number(r.id), campaign_id: r.campaign_id === null ? null : Number(r.campaign_id) }));
    },
  };
}
