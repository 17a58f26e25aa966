import type { Kysely } from 'kysely';
import { prunedTable } from './columns.ts';
import type { MigrationContext } from './index.ts';

/**
 * The ids of tracking batches already written, in the same transaction as their events: a batch
 * retried after its reply was lost (the connection dropped after COMMIT) finds its id and is not
 * written twice. One row per batch; `events` is what that batch inserted, for the retry's answer.
 * Old ids are pruned by `created_at`.
 */
export async function up(db: Kysely<any>, m: MigrationContext): Promise<void> {
  await prunedTable(db, 'notify_tracking_batches', { key: 'id', count: 'events', time: 'created_at', index: 'notify_tracking_batches_created' }, m);
}
