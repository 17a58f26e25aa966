import { type Kysely, sql } from 'kysely';
import { required } from './columns.ts';
import type { MigrationContext } from './index.ts';

/**
 * A history of status changes, for the contact's timeline in the admin pages: the contact's own
 * status (subscribed -> unsubscribed, pending -> subscribed, ...) and each list membership's (joined,
 * left, rejoined). Triggers write it, so every path that changes a status records the change in
 * the same statement: the unsubscribe link, webhooks, imports, the API, a double opt-in, and any
 * writer added later. Times are the row's own (`updated_at`, the membership's `created_at` /
 * `unsubscribed_at`), so they follow notify's clock, not the database's. A contact's first status
 * is not a change: the timeline reads it from the first change's `from_status`. Rows go with the
 * contact (erasure) and with the list.
 */
export async function up(db: Kysely<any>, { id, pk, ref, ts, kind }: MigrationContext): Promise<void> {
  await db.schema
    .createTable('notify_status_changes')
    .addColumn('id', id, pk)
    .addColumn('contact_id', ref, (c) => c.notNull().references('notify_contacts.id').onDelete('cascade'))
    .addColumn('list_id', ref, (c) => c.references('notify_lists.id').onDelete('cascade'))
    .addColumn('from_status', 'text')
    .$call(required(['to_status', 'text'], ['created_at', ts]))
    .execute();
  await db.schema.createIndex('notify_status_changes_contact').on('notify_status_changes').columns(['contact_id', 'created_at']).execute();
  await db.schema.createIndex('notify_status_changes_list').on('notify_status_changes').column('list_id').execute();
  if (kind === 'sqlite') await sqliteTriggers(db);
  else await postgresTriggers(db);
}

/** when a membership row took its status: leaving has its own time, joining (again) resets created_at */
const MEMBERSHIP_TIME = (row: string) => `case when ${row}.status = 'unsubscribed' then coalesce(${row}.unsubscribed_at, ${row}.created_at) else ${row}.created_at end`;

async function sqliteTriggers(db: Kysely<any>): Promise<void> {
  await sql`create trigger notify_contacts_status_changed after update of status on notify_contacts
    when old.status is not new.status
    begin
      insert into notify_status_changes (contact_id, list_id, from_status, to_status, created_at) values (new.id, null, old.status, new.status, new.updated_at);
    end`.execute(db);
  await sql`create trigger notify_list_members_added after insert on notify_list_members
    begin
      insert into notify_status_changes (contact_id, list_id, from_status, to_status, created_at) values (new.contact_id, new.list_id, null, new.status, ${sql.raw(MEMBERSHIP_TIME('new'))});
    end`.execute(db);
  await sql`create trigger notify_list_members_status_changed after update of status on notify_list_members
    when old.status is not new.status
    begin
      insert into notify_status_changes (contact_id, list_id, from_status, to_status, created_at) values (new.contact_id, new.list_id, old.status, new.status, ${sql.raw(MEMBERSHIP_TIME('new'))});
    end`.execute(db);
}

/**
 * Row triggers with a WHEN clause for updates (the function runs only when a status really
 * changes); one statement trigger for inserted memberships, so an import's multi-row INSERT records
 * its joins with one INSERT ... SELECT instead of a function call per row.
 */
async function postgresTriggers(db: Kysely<any>): Promise<void> {
  await sql`create function notify_contact_status_changed() returns trigger language plpgsql as $$
    begin
      insert into notify_status_changes (contact_id, list_id, from_status, to_status, created_at) values (new.id, null, old.status, new.status, new.updated_at);
      return null;
    end $$`.execute(db);
  await sql`create trigger notify_contacts_status_changed after update of status on notify_contacts
    for each row when (old.status is distinct from new.status) execute procedure notify_contact_status_changed()`.execute(db);
  await sql`create function notify_list_members_added() returns trigger language plpgsql as $$
    begin
      insert into notify_status_changes (contact_id, list_id, from_status, to_status, created_at)
        select added.contact_id, added.list_id, null, added.status, ${sql.raw(MEMBERSHIP_TIME('added'))} from added;
      return null;
    end $$`.execute(db);
  await sql`create trigger notify_list_members_added after insert on notify_list_members
    referencing new table as added for each statement execute procedure notify_list_members_added()`.execute(db);
  await sql`create function notify_list_member_status_changed() returns trigger language plpgsql as $$
    begin
      insert into notify_status_changes (contact_id, list_id, from_status, to_status, created_at) values (new.contact_id, new.list_id, old.status, new.status, ${sql.raw(MEMBERSHIP_TIME('new'))});
      return null;
    end $$`.execute(db);
  await sql`create trigger notify_list_members_status_changed after update of status on notify_list_members
    for each row when (old.status is distinct from new.status) execute procedure notify_list_member_status_changed()`.execute(db);
}
