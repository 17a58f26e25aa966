import type { Kysely } from 'kysely';
import { prunedTable } from './columns.ts';
import type { MigrationContext } from './index.ts';

/**
 * Form capture: when a double opt-in link was issued, so links expire; and a fixed-window
 * counter table for `rateLimitStore: 'database'`, shared by every instance on the same database.
 */
export async function up(db: Kysely<any>, m: MigrationContext): Promise<void> {
  await db.schema.alterTable('notify_contacts').addColumn('confirm_sent_at', m.ts).execute();
  await prunedTable(db, 'notify_rate_limits', { key: 'bucket', count: 'hits', time: 'reset_at', index: 'notify_rate_limits_reset' }, m);
}
