import type { Kysely } from 'kysely';
import type { MigrationContext } from './index.ts';

/**
 * Link-burst detection (repos/link-bursts.ts) asks, on every tracking flush with clicks, which
 * links each send had clicked in the last seconds. With (send_id, type) alone that reads every
 * click the send ever had; this index answers it from the index for the window only. It replaces
 * notify_events_send, a prefix of it, so event inserts maintain no extra b-tree.
 */
export async function up(db: Kysely<any>, _ctx: MigrationContext): Promise<void> {
  await db.schema.createIndex('notify_events_send_time').on('notify_events').columns(['send_id', 'type', 'created_at', 'link_index']).execute();
  await db.schema.dropIndex('notify_events_send').execute();
}
