import type { Kysely } from 'kysely';
import type { MigrationContext } from './index.ts';

/**
 * A campaign's own choice of open and click tracking. NULL (every existing campaign) follows the
 * trackOpens / trackClicks options, so turning an option off still reaches campaigns that never chose.
 */
export async function up(db: Kysely<any>, _ctx: MigrationContext): Promise<void> {
  await db.schema.alterTable('notify_campaigns').addColumn('track_opens', 'integer').execute();
  await db.schema.alterTable('notify_campaigns').addColumn('track_clicks', 'integer').execute();
}
