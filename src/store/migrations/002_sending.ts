import { type Kysely, sql } from 'kysely';
import type { MigrationContext } from './index.ts';

/** Campaign-level Liquid data and custom headers, given to every recipient's render and message. */
export async function up(db: Kysely<any>, { json }: MigrationContext): Promise<void> {
  await db.schema.alterTable('notify_campaigns').addColumn('data', json, (c) => c.notNull().defaultTo(sql`'{}'`)).execute();
  await db.schema.alterTable('notify_campaigns').addColumn('headers', json, (c) => c.notNull().defaultTo(sql`'{}'`)).execute();
}
