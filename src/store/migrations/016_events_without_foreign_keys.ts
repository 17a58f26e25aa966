import { type Kysely, sql } from 'kysely';
import type { MigrationContext } from './index.ts';

/**
 * PostgreSQL: notify_events loses its three foreign keys (send, contact, campaign). Each inserted
 * event ran three referential checks, each a row lock on its parent, and together they cost more
 * server time than the insert (a 1,000-open tracking batch: 5.8 ms for the insert, 11.2 ms for
 * the checks, EXPLAIN ANALYZE). What they did is done by the code that deletes parents: erasure
 * anonymises the person's events first, a deleted campaign takes its events with it, and the few
 * event writers outside the tracking batch (unsubscribe, webhooks) lock the rows they name
 * (repos/events.ts).
 * SQLite keeps them: dropping one there means rebuilding the table, and its checks cost ~1.3 µs of
 * an event's ~6 µs insert (measured).
 */
export async function up(db: Kysely<any>, { kind }: MigrationContext): Promise<void> {
  if (kind !== 'postgres') return;
  const { rows } = await sql<{ name: string }>`
    select conname as name from pg_constraint
    where conrelid = to_regclass('notify_events') and contype = 'f'`.execute(db);
  for (const { name } of rows) await sql`alter table notify_events drop constraint ${sql.id(name)}`.execute(db);
}
