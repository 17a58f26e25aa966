import type { Kysely } from 'kysely';
import type { CampaignsRepo } from '../../core/storage/campaigns.ts';
import type { StoreDialect } from '../dialect.ts';
import type { Outbox } from '../outbox.ts';
import { flagColumn, layoutColumn } from '../rows.ts';
import type { Database } from '../schema.ts';
import { campaignAudience } from './campaigns/audience.ts';
import { campaignLifecycle } from './campaigns/lifecycle.ts';
import { campaignById, campaignRow, toCampaign } from './campaigns/rows.ts';
import { campaignSchedule } from './campaigns/schedule.ts';
import { campaignSending } from './campaigns/sending.ts';

/** The campaigns repository: creation and reads here, the rest in campaigns/ by concern. */
export function createCampaignsRepo(db: Kysely<Database>, dialect: StoreDialect, outbox: Outbox): CampaignsRepo {
  return {
    async create(input, now) {
      const { data, headers, layout, segment, track_opens, track_clicks, ...rest } = input;
      const row = await db
        .insertInto('notify_campaigns')
        .values({
          ...rest,
          layout: layoutColumn(layout),
          track_opens: flagColumn(track_opens),
          track_clicks: flagColumn(track_clicks),
          data: JSON.stringify(data),
          headers: JSON.stringify(headers),
          segment: segment === null ? null : JSON.stringify(segment),
          status: 'draft',
          created_at: now,
          sent_at: null,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return campaignById(db, Number(row.id));
    },
    async getById(id) {
      const row = await campaignRow(db, id);
      return row && toCampaign(row);
    },
    ...campaignAudience(db, dialect),
    ...campaignLifecycle(db, dialect, outbox),
    ...campaignSchedule(db),
    ...campaignSending(db, dialect, outbox),
  };
}
