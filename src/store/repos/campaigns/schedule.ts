import type { Kysely } from 'kysely';
import type { CampaignsRepo } from '../../../core/storage/campaigns.ts';
import { earliest } from '../../rows.ts';
import type { Database } from '../../schema.ts';
import { campaignsWithList, toCampaign } from './rows.ts';

/** which campaigns there are: a page of them, those in a status, and those the worker has to start */
export function campaignSchedule(db: Kysely<Database>): Pick<CampaignsRepo, 'list' | 'idsWithStatus' | 'dueScheduled' | 'nextSendAt'> {
  return {
    async list({ status, limit, after }) {
      let q = campaignsWithList(db);
      if (status) q = q.where('notify_campaigns.status', '=', status);
      if (after !== undefined) q = q.where('notify_campaigns.id', '>', after);
      const rows = await q.orderBy('notify_campaigns.id').limit(limit).execute();
      return rows.map(toCampaign);
    },
    async idsWithStatus(status) {
      const rows = await db.selectFrom('notify_campaigns').select('id').where('status', '=', status).orderBy('id').execute();
      return rows.map((r) => Number(r.id));
    },
    async dueScheduled(now) {
      const rows = await db.selectFrom('notify_campaigns').select('id').where('status', '=', 'scheduled').where('send_at', '<=', now).orderBy('send_at').orderBy('id').execute();
      return rows.map((r) => Number(r.id));
    },
    async nextSendAt(after) {
      return earliest(await db.selectFrom('notify_campaigns').select((eb) => eb.fn.min('send_at').as('t')).where('status', '=', 'scheduled').where('send_at', '>', after).executeTakeFirst());
    },
  };
}
