import type { Kysely } from 'kysely';
import type { CampaignsRepo } from '../../../core/storage/campaigns.ts';
import { atomically, type Outbox } from '../../outbox.ts';
import type { Database } from '../../schema.ts';
import { campaignById } from './rows.ts';

/** a status change from one of `from`; a campaign becoming sent announces it (notify:campaign.sent) in the same transaction */
export function campaignTransition(db: Kysely<Database>, outbox: Outbox): Pick<CampaignsRepo, 'transition'> {
  return {
    async transition(id, from, to, fields, now) {
      if (from.length === 0) return undefined;
      const announce = to === 'sent' && outbox.wants('notify:campaign.sent');
      const change = async (trx: Kysely<Database>) => {
        const res = await trx
          .updateTable('notify_campaigns')
          .set({ status: to, ...(to === 'sent' ? { sent_at: now } : {}), ...fields })
          .where('id', '=', id)
          .where('status', 'in', [...from])
          .executeTakeFirst();
        if (Number(res.numUpdatedRows) !== 1) return undefined;
        if (!announce) return [];
        const row = await trx.selectFrom('notify_campaigns').select(['name', 'subject']).where('id', '=', id).executeTakeFirstOrThrow();
        const counts = await trx.selectFrom('notify_campaign_counters').selectAll().where('campaign_id', '=', id).executeTakeFirst();
        const event = {
          type: 'notify:campaign.sent' as const,
          data: { campaign: { id, name: row.name, subject: row.subject }, sent: Number(counts?.sent ?? 0), failed: Number(counts?.failed ?? 0), suppressed: Number(counts?.suppressed ?? 0) },
        };
        await outbox.write(trx, [event], now);
        return [event];
      };
      const events = announce ? await atomically(db, change) : await change(db);
      if (!events) return undefined;
      outbox.publish(events);
      return campaignById(db, id);
    },
  };
}
