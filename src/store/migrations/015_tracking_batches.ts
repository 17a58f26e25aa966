import type { Kysely } from 'kysely';
import type { MigrationContext } from './index.ts';

/**
 * The ids of tracking batches already written, in the same transaction as their events: a batch
 * retried after its reply was lost (the connection dropped after COMMIT) finds its id and is not
 * written twice. One row per batch; `events` is what that batch inserted, for the retry's answer.
 * Old ids are pruned by `created_at`.
 */
export async function up(db: Kysely<any>, { ts }: MigrationContext): Promise<void> {
  await db.schema
    .createTable('notify_tracking_batches')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('events', 'integer', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('notify_tracking_batches_created').on('notify_tracking_batches').column('created_at').execute();
}
