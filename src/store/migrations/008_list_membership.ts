import type { Kysely } from 'kysely';
import type { MigrationContext } from './index.ts';

/**
 * Lists as records of their own (a description, whether a public form may join them), a status per
 * membership so a person can leave one list and stay on others, a campaign's segment, and the
 * indexes audience queries need. Existing members were subscribed: the default says so.
 */
export async function up(db: Kysely<any>, { ts, json, bool }: MigrationContext): Promise<void> {
  await db.schema.alterTable('notify_lists').addColumn('description', 'text').execute();
  await db.schema.alterTable('notify_lists').addColumn('public', bool, (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('notify_list_members').addColumn('status', 'text', (c) => c.notNull().defaultTo('subscribed')).execute();
  await db.schema.alterTable('notify_list_members').addColumn('unsubscribed_at', ts).execute();
  await db.schema.alterTable('notify_campaigns').addColumn('segment', json).execute();
  // a list's subscribers, in contact id order (campaign runs and contacts.list page through them)
  await db.schema.createIndex('notify_list_members_list_status').on('notify_list_members').columns(['list_id', 'status', 'contact_id']).execute();
  await db.schema.createIndex('notify_contacts_created').on('notify_contacts').columns(['created_at']).execute();
}
