import type { Kysely } from 'kysely';
import type { MigrationContext } from './index.ts';

/**
 * Drops the partial index notify_events_clicks (004_events_click_index). Every stored click paid
 * for it: one more b-tree to insert into and commit, at a random position (by send), which on
 * SQLite was most of what a click cost beyond an open. Its readers now use the indexes every
 * event keeps anyway (repos/link-bursts.ts): a send's clicks of the last seconds through
 * notify_events_campaign_time (campaign, type, time; a send without a campaign under campaign_id
 * null), and a send's first human click through notify_events_contact.
 */
export async function up(db: Kysely<any>, _ctx: MigrationContext): Promise<void> {
  await db.schema.dropIndex('notify_events_clicks').ifExists().execute();
}
