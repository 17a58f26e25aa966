import type { Kysely } from 'kysely';
import type { MigrationContext } from './index.ts';

/**
 * The campaign's counters (sends; bounces plus complaints) when it was last resumed: auto-pause
 * judges only what came after, so a campaign resumed after an auto-pause is not paused again at
 * once for the bounces that paused it. Null: never resumed, judged on all of its sends.
 */
export async function up(db: Kysely<any>, _ctx: MigrationContext): Promise<void> {
  await db.schema.alterTable('notify_campaigns').addColumn('auto_pause_sent_base', 'integer').execute();
  await db.schema.alterTable('notify_campaigns').addColumn('auto_pause_bad_base', 'integer').execute();
}
