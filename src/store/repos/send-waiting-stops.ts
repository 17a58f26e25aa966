import type { Kysely } from 'kysely';
import type { SendsRepo } from '../../core/storage/sends.ts';
import type { Database } from '../schema.ts';

/** Sends waiting for another try that will not get it: cancelled, or suppressed with their contact. */
export function createWaitingStops(db: Kysely<Database>): Pick<SendsRepo, 'cancelWaiting' | 'suppressWaiting'> {
  return {
    async cancelWaiting(scope, now) {
      let q = db.updateTable('notify_sends').set({ status: 'cancelled', next_attempt_at: null, updated_at: now });
      q = 'campaignId' in scope ? q.where('campaign_id', '=', scope.campaignId).where('status', 'in', ['deferred', 'queued']) : q.where('contact_id', '=', scope.contactId).where('enrollment_id', 'is not', null).where('status', 'in', ['deferred', 'queued']);
      return Number((await q.executeTakeFirst()).numUpdatedRows);
    },
    async suppressWaiting(contactId, now) {
      const rows = await db
        .updateTable('notify_sends')
        .set({ status: 'suppressed', error: null, next_attempt_at: null, updated_at: now })
        .where('contact_id', '=', contactId)
        .where('campaign_id', 'is not', null)
        .where('status', '=', 'deferred')
        .returning('campaign_id')
        .execute();
      const byCampaign = new Map<number, number>();
      for (const r of rows) byCampaign.set(Number(r.campaign_id), (byCampaign.get(Number(r.campaign_id)) ?? 0) + 1);
      return byCampaign;
    },
  };
}
