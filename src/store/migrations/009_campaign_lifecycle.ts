import type { Kysely } from 'kysely';
import type { MigrationContext } from './index.ts';

/**
 * A campaign's time to start (`scheduled`), why it stopped when notify stopped it (auto-pause, an
 * empty audience), and the index the worker's "which scheduled campaigns are due" read uses.
 */
export async function up(db: Kysely<any>, { ts }: MigrationContext): Promise<void> {
  await db.schema.alterTable('notify_campaigns').addColumn('send_at', ts).execute();
  await db.schema.alterTable('notify_campaigns').addColumn('status_reason', 'text').execute();
  await db.schema.createIndex('notify_campaigns_status_send_at').on('notify_campaigns').columns(['status', 'send_at']).execute();
}
