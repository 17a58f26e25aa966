import type { Kysely } from 'kysely';
import type { MigrationContext } from './index.ts';

/**
 * The next free sending turn (epoch microseconds, so fractional intervals do not drift) per pacing key (`*` for the whole instance, `d:<domain>` per recipient
 * domain) for `rateLimitStore: 'database'`: every worker on the same database takes turns from it.
 */
export async function up(db: Kysely<any>, { ts }: MigrationContext): Promise<void> {
  await db.schema
    .createTable('notify_send_pacing')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('next_us', ts, (c) => c.notNull())
    .execute();
}
