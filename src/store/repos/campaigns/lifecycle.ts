import type { Kysely } from 'kysely';
import type { CampaignsRepo } from '../../../core/storage/campaigns.ts';
import type { CampaignStatus } from '../../../core/types.ts';
import type { StoreDialect } from '../../dialect.ts';
import type { Outbox } from '../../outbox.ts';
import type { Database } from '../../schema.ts';
import { fixedStatement } from '../../fixed-statement.ts';
import { campaignAutoPauseBase } from './auto-pause-base.ts';
import { campaignById, changeColumns } from './rows.ts';
import { campaignTransition } from './transition.ts';

/**
 * A run reads its campaign's status between chunks and while it waits (a pause, a cancel): by
 * primary key only, so one plan fits any table and the text is kept prepared (no compile, parse
 * or plan per read: about 500 us of backend CPU a run of it on PostgreSQL, loaded machine).
 */
const STATUS_OF = fixedStatement('select status from notify_campaigns where id = ?');

/** status changes and edits, each a compare-and-set on the status it starts from */
export function campaignLifecycle(db: Kysely<Database>, dialect: Pick<StoreDialect, 'holdRow'>, outbox: Outbox): Pick<CampaignsRepo, 'statusOf' | 'autoPauseBase' | 'addToAutoPauseBase' | 'transition' | 'update' | 'deleteDraft' | 'holdSending'> {
  return {
    async statusOf(id) {
      const [row] = (await STATUS_OF<{ status: string }>(db, [id])).rows;
      return row?.status as CampaignStatus | undefined;
    },
    ...campaignAutoPauseBase(db),
    ...campaignTransition(db, outbox),
    async update(id, from, changes) {
      const res = await db.updateTable('notify_campaigns').set(changeColumns(changes)).where('id', '=', id).where('status', 'in', [...from]).executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) return undefined;
      return campaignById(db, id);
    },
    async deleteDraft(id) {
      return db.transaction().execute(async (trx) => {
        const res = await trx.deleteFrom('notify_campaigns').where('id', '=', id).where('status', '=', 'draft').executeTakeFirst();
        if (Number(res.numDeletedRows) !== 1) return false;
        // a test send stored the draft's links under its scope
        await trx.deleteFrom('notify_links').where('scope', '=', `c${id}`).execute();
        // no foreign key does it on PostgreSQL (migration 016)
        await trx.deleteFrom('notify_events').where('campaign_id', '=', id).execute();
        return true;
      });
    },
    async holdSending(id) {
      // PostgreSQL: a share lock, which a pause's update waits for as it waits for a write lock, but
      // which the send loop's group commits (sharing it too) do not wait for: a run claims its next
      // chunk while its sends go on
      return dialect.holdRow(db, 'notify_campaigns', id, 'status', 'sending');
    },
  };
}
