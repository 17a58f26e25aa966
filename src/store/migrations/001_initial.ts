import { type CreateTableBuilder, type Kysely, sql } from 'kysely';
import { namedTable, pairKeyedTable, required } from './columns.ts';
import type { MigrationContext } from './index.ts';

/** The message columns campaigns and steps share (the column order is the one the first release created). */
const messageColumns = <T extends string, C extends string>(t: CreateTableBuilder<T, C>) =>
  t
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('html', 'text')
    .addColumn('markdown', 'text')
    .addColumn('markdown_file', 'text')
    .addColumn('text', 'text')
    .addColumn('layout', 'text');

/** The whole schema of the first release. Both engines, one definition: see MigrationContext. */
export async function up(db: Kysely<any>, m: MigrationContext): Promise<void> {
  await db.schema
    .createTable('notify_meta')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
  await contactTables(db, m);
  await messageTables(db, m);
  await sendTables(db, m);
  await eventTables(db, m);
  await bookkeepingTables(db, m);
}

/** Contacts, lists and who is on which */
async function contactTables(db: Kysely<any>, m: MigrationContext): Promise<void> {
  const { id, pk, ref, ts, json } = m;
  await db.schema
    .createTable('notify_contacts')
    .addColumn('id', id, pk)
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('email_key', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text')
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('subscribed'))
    .addColumn('unsubscribe_token', 'text', (c) => c.notNull().unique())
    .addColumn('attributes', json, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('consent_at', ts)
    .addColumn('consent_source', 'text')
    .addColumn('consent_ip', 'text')
    .addColumn('confirm_token_hash', 'text', (c) => c.unique())
    .$call(required(['created_at', ts], ['updated_at', ts]))
    .execute();
  await db.schema.createIndex('notify_contacts_status').on('notify_contacts').column('status').execute();

  await namedTable(db, 'notify_lists', m).execute();
  await db.schema
    .createTable('notify_list_members')
    .addColumn('list_id', ref, (c) => c.notNull().references('notify_lists.id').onDelete('cascade'))
    .addColumn('contact_id', ref, (c) => c.notNull().references('notify_contacts.id').onDelete('cascade'))
    .addColumn('created_at', ts, (c) => c.notNull())
    .addPrimaryKeyConstraint('notify_list_members_pk', ['list_id', 'contact_id'])
    .execute();
  await db.schema.createIndex('notify_list_members_contact').on('notify_list_members').column('contact_id').execute();
}

/** Campaigns, drip sequences with their steps, and enrollments */
async function messageTables(db: Kysely<any>, m: MigrationContext): Promise<void> {
  const { id, pk, ref, ts } = m;
  await db.schema
    .createTable('notify_campaigns')
    .addColumn('id', id, pk)
    .addColumn('name', 'text')
    .$call(messageColumns)
    .addColumn('list_id', ref, (c) => c.references('notify_lists.id'))
    .addColumn('from_name', 'text')
    .addColumn('from_email', 'text')
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('draft'))
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('sent_at', ts)
    .execute();

  await namedTable(db, 'notify_sequences', m).execute();
  await db.schema
    .createTable('notify_steps')
    .addColumn('id', id, pk)
    .addColumn('sequence_id', ref, (c) => c.notNull().references('notify_sequences.id').onDelete('cascade'))
    .$call(required(['position', 'integer'], ['delay_minutes', 'integer']))
    .$call(messageColumns)
    .addColumn('created_at', ts, (c) => c.notNull())
    .addUniqueConstraint('notify_steps_sequence_position', ['sequence_id', 'position'])
    .execute();
  await db.schema
    .createTable('notify_enrollments')
    .addColumn('id', id, pk)
    .addColumn('sequence_id', ref, (c) => c.notNull().references('notify_sequences.id').onDelete('cascade'))
    .addColumn('contact_id', ref, (c) => c.notNull().references('notify_contacts.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('active'))
    .addColumn('step_index', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_send_at', ts)
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('locked_at', ts)
    .addColumn('claim_token', 'text')
    .addColumn('last_error', 'text')
    .$call(required(['created_at', ts], ['updated_at', ts]))
    .addUniqueConstraint('notify_enrollments_sequence_contact', ['sequence_id', 'contact_id'])
    .execute();
  await db.schema.createIndex('notify_enrollments_due').on('notify_enrollments').columns(['status', 'next_send_at']).execute();
  await db.schema.createIndex('notify_enrollments_contact').on('notify_enrollments').columns(['contact_id', 'status']).execute();
}

/** One row a message handed to the mailer */
async function sendTables(db: Kysely<any>, { id, pk, ref, ts }: MigrationContext): Promise<void> {
  await db.schema
    .createTable('notify_sends')
    .addColumn('id', id, pk)
    .addColumn('token', 'text', (c) => c.notNull().unique())
    .addColumn('campaign_id', ref, (c) => c.references('notify_campaigns.id').onDelete('cascade'))
    .addColumn('contact_id', ref, (c) => c.references('notify_contacts.id').onDelete('set null'))
    .addColumn('enrollment_id', ref, (c) => c.references('notify_enrollments.id').onDelete('set null'))
    .addColumn('step_id', ref)
    .addColumn('step_index', 'integer')
    .$call(required(['to_email', 'text'], ['subject', 'text'], ['status', 'text']))
    .addColumn('error', 'text')
    .addColumn('message_id', 'text')
    .$call(required(['created_at', ts], ['updated_at', ts]))
    .addColumn('sent_at', ts)
    .addColumn('opened_at', ts)
    .addColumn('clicked_at', ts)
    .addUniqueConstraint('notify_sends_campaign_contact', ['campaign_id', 'contact_id'])
    .addUniqueConstraint('notify_sends_enrollment_step', ['enrollment_id', 'step_index'])
    .execute();
  await db.schema.createIndex('notify_sends_campaign_status').on('notify_sends').columns(['campaign_id', 'status']).execute();
  await db.schema.createIndex('notify_sends_status_updated').on('notify_sends').columns(['status', 'updated_at']).execute();
  await db.schema.createIndex('notify_sends_contact').on('notify_sends').column('contact_id').execute();
  await db.schema.createIndex('notify_sends_message_id').on('notify_sends').column('message_id').execute();
}

/** What recipients did with a message, and the links it carried */
async function eventTables(db: Kysely<any>, { id, pk, ref, ts, json, bool }: MigrationContext): Promise<void> {
  await db.schema
    .createTable('notify_events')
    .addColumn('id', id, pk)
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('send_id', ref, (c) => c.references('notify_sends.id').onDelete('set null'))
    .addColumn('contact_id', ref, (c) => c.references('notify_contacts.id').onDelete('set null'))
    .addColumn('campaign_id', ref, (c) => c.references('notify_campaigns.id').onDelete('cascade'))
    .addColumn('link_index', 'integer')
    .addColumn('metadata', json, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('is_machine', bool, (c) => c.notNull().defaultTo(0))
    .addColumn('machine_reason', 'text')
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('notify_events_send').on('notify_events').columns(['send_id', 'type']).execute();
  await db.schema.createIndex('notify_events_campaign_time').on('notify_events').columns(['campaign_id', 'type', 'created_at']).execute();
  await db.schema.createIndex('notify_events_contact').on('notify_events').column('contact_id').execute();

  await db.schema
    .createTable('notify_links')
    .addColumn('id', id, pk)
    .$call(required(['scope', 'text'], ['position', 'integer'], ['url', 'text'], ['created_at', ts]))
    .addUniqueConstraint('notify_links_scope_position', ['scope', 'position'])
    .execute();
}

/** What outlives an erasure, campaign totals kept as they change, webhook deliveries already applied */
async function bookkeepingTables(db: Kysely<any>, m: MigrationContext): Promise<void> {
  const { ref, ts } = m;
  await db.schema
    .createTable('notify_tombstones')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .$call(required(['email_hash', 'text'], ['status', 'text'], ['created_at', ts]))
    .execute();
  await db.schema.createIndex('notify_tombstones_email').on('notify_tombstones').column('email_hash').execute();

  await db.schema
    .createTable('notify_campaign_counters')
    .addColumn('campaign_id', ref, (c) => c.primaryKey().references('notify_campaigns.id').onDelete('cascade'))
    .addColumn('total', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('sent', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('failed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('suppressed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('opened', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('clicked', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('human_opened', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('human_clicked', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('bounced', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('complained', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('unsubscribed', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  await pairKeyedTable(db, 'notify_webhook_receipts', ['provider', 'message_id'], 'created_at', m).execute();
}
