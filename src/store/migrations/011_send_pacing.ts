import type { Kysely } from 'kysely';
import { pairKeyedTable } from './columns.ts';
import type { MigrationContext } from './index.ts';

/**
 * Sending turns for `rateLimitStore: 'database'`, shared by every worker on the same database. Per
 * pacing key (`*` for the whole instance, `d:<domain>` per recipient domain): the next free turn in
 * epoch microseconds (so fractional intervals do not drift), and the turns that still count in the
 * one-second window (until their message left a second ago; `until` in epoch ms).
 */
export async function up(db: Kysely<any>, m: MigrationContext): Promise<void> {
  const { ts } = m;
  await db.schema
    .createTable('notify_send_pacing')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('next_us', ts, (c) => c.notNull())
    .execute();
  await pairKeyedTable(db, 'notify_send_pacing_turns', ['key', 'turn'], 'until', m).execute();
}
