import type { Kysely } from 'kysely';
import type { MigrationContext } from './index.ts';

/**
 * Form capture: when a double opt-in link was issued, so links expire; and a fixed-window
 * counter table for `rateLimitStore: 'database'`, shared by every instance on the same database.
 */
export async function up(db: Kysely<any>, { ts }: MigrationContext): Promise<void> {
  await db.schema.alterTable('notify_contacts').addColumn('confirm_sent_at', ts).execute();
  await db.schema
    .createTable('notify_rate_limits')
    .addColumn('bucket', 'text', (c) => c.primaryKey())
    .addColumn('hits', 'integer', (c) => c.notNull())
    .addColumn('reset_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('notify_rate_limits_reset').on('notify_rate_limits').column('reset_at').execute();
}
