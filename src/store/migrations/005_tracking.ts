import type { Kysely } from 'kysely';
import type { MigrationContext } from './index.ts';

/**
 * First human open/click per send. opened_at/clicked_at count any open or click (spec); these two
 * let the tracking flush count unique human opens/clicks exactly once, with the same
 * `... is null` guard, instead of scanning events.
 */
export async function up(db: Kysely<any>, { ts }: MigrationContext): Promise<void> {
  await db.schema.alterTable('notify_sends').addColumn('human_opened_at', ts).execute();
  await db.schema.alterTable('notify_sends').addColumn('human_clicked_at', ts).execute();
}
