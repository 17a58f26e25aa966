import type { Kysely } from 'kysely';
import type { CampaignsRepo } from '../../../core/storage/campaigns.ts';
import type { Database } from '../../schema.ts';

/** the counters an auto-pause window starts from, and the late reports that belong before it */
export function campaignAutoPauseBase(db: Kysely<Database>): Pick<CampaignsRepo, 'autoPauseBase' | 'addToAutoPauseBase'> {
  return {
    async autoPauseBase(id) {
      const row = await db.selectFrom('notify_campaigns').select(['auto_pause_sent_base', 'auto_pause_bad_base']).where('id', '=', id).executeTakeFirst();
      return { sent: Number(row?.auto_pause_sent_base ?? 0), bad: Number(row?.auto_pause_bad_base ?? 0) };
    },
    async addToAutoPauseBase(id, sendId) {
      const campaign = await db.selectFrom('notify_campaigns').select('auto_pause_sent_base').where('id', '=', id).executeTakeFirst();
      const base = campaign?.auto_pause_sent_base;
      if (base === null || base === undefined) return false;
      const send = await db.selectFrom('notify_sends').select(['id', 'sent_at']).where('id', '=', sendId).where('campaign_id', '=', id).executeTakeFirst();
      if (!send || send.sent_at === null) return false;
      // The base counts the campaign's first `base` sends, in the order they were sent (every send
      // row with a sent_at is counted in `sent`, and keeps it): the send is one of them when no more
      // than `base` were sent up to it. Sends of one group commit share a time; the id orders those.
      const at = Number(send.sent_at);
      const row = await db
        .selectFrom('notify_sends')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('campaign_id', '=', id)
        .where((eb) => eb.or([eb('sent_at', '<', at), eb.and([eb('sent_at', '=', at), eb('id', '<=', Number(send.id))])]))
        .executeTakeFirst();
      if (Number(row?.n ?? 0) > Number(base)) return false;
      // only under the base it was judged against: a resume meanwhile took new counters, this report among them
      const res = await db
        .updateTable('notify_campaigns')
        .set((eb) => ({ auto_pause_bad_base: eb(eb.fn.coalesce('auto_pause_bad_base', eb.lit(0)), '+', 1) }))
        .where('id', '=', id)
        .where('auto_pause_sent_base', '=', base)
        .executeTakeFirst();
      return Number(res.numUpdatedRows) === 1;
    },
  };
}
