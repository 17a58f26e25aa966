import type { Kysely } from 'kysely';
import type { MigrationContext } from './index.ts';

/**
 * Sending turns for `rateLimitStore: 'database'`, shared by every worker on the same database. Per
 * pacing key (`*` for the whole instance, `d:<domain>` per recipient domain): the next free turn in
 * epoch microseconds (so fractional intervals do not drift), and the turns that still count in the
 * one-second window (until their message left a second ago; `until` in epoch ms).
 */
export async function up(db: Kysely<any>, { ts }: MigrationContext): Promise<void> {
  await db.schema
    .createTable('notify_send_pacing')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('next_us', ts, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('notify_send_pacing_turns')
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('turn', 'text', (c) => c.notNull())
    .addColumn('until', ts, (c) => c.notNull())
    .addPrimaryKeyConstraint('notify_send_pacing_turns_pk', ['key', 'turn'])
    .execute();
}
