import type { Kysely } from 'kysely';
import type { CampaignsRepo } from '../../../core/storage/campaigns.ts';
import type { StoreDialect } from '../../dialect.ts';
import type { Outbox } from '../../outbox.ts';
import type { Database } from '../../schema.ts';
import { createSendGroupWriter } from '../send-groups.ts';

/** a run's send rows: claimed and written a group at a time, counted while in flight, released when a run stops */
export function campaignSending(db: Kysely<Database>, dialect: StoreDialect, outbox: Outbox): Pick<CampaignsRepo, 'writeSendGroup' | 'countSending' | 'releaseClaims'> {
  return {
    writeSendGroup: createSendGroupWriter(db, dialect, outbox),
    async countSending(id, since) {
      const row = await db
        .selectFrom('notify_sends')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('campaign_id', '=', id)
        .where('status', '=', 'sending')
        .where('updated_at', '>=', since)
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    },
    async releaseClaims(id, sendIds) {
      let released = 0;
      for (let i = 0; i < sendIds.length; i += 500) {
        const ids = sendIds.slice(i, i + 500);
        const res = await db.deleteFrom('notify_sends').where('campaign_id', '=', id).where('id', 'in', ids).where('status', '=', 'queued').where('attempts', '=', 0).executeTakeFirst();
        released += Number(res.numDeletedRows);
        // a retry keeps its row and its attempts: it waits as deferred, due at once
        await db.updateTable('notify_sends').set({ status: 'deferred' }).where('campaign_id', '=', id).where('id', 'in', ids).where('status', '=', 'queued').execute();
      }
      return released;
    },
  };
}
