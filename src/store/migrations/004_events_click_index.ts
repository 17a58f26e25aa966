import { type Kysely, sql } from 'kysely';
import type { MigrationContext } from './index.ts';

/**
 * Only clicks are looked up by send (link bursts, repos/link-bursts.ts), so the send index covers
 * clicks only: an open, by far the most frequent event, then maintains one b-tree fewer. Queries
 * must say `type = 'click'` as a literal for SQLite to pick a partial index; `type` is a column too so
 * the burst queries are answered from the index alone. (Nothing deletes sends;
 * if something ever does, its ON DELETE SET NULL on events would scan opens.)
 */
export async function up(db: Kysely<any>, _ctx: MigrationContext): Promise<void> {
  await sql`create index notify_events_clicks on notify_events (send_id, type, created_at, link_index) where type = 'click'`.execute(db);
  await db.schema.dropIndex('notify_events_send_time').execute();
}
