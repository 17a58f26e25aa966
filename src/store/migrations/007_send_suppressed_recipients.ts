import type { Kysely } from 'kysely';
import type { MigrationContext } from './index.ts';

/**
 * The recipients a one-off message left out because their contacts are suppressed: a JSON list of
 * { field, contact_id, status }. Contact ids rather than addresses, so erasing a person leaves
 * nothing that names them in other people's send rows.
 */
export async function up(db: Kysely<any>, { json }: MigrationContext): Promise<void> {
  await db.schema.alterTable('notify_sends').addColumn('suppressed_recipients', json).execute();
}
