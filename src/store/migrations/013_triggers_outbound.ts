import type { Kysely } from 'kysely';
import { required } from './columns.ts';
import type { MigrationContext } from './index.ts';

/**
 * A sequence may start itself when a contact joins a list (trigger_list_id), and the transactional
 * outbox of outgoing webhooks: one row per event and receiving endpoint, written in the transaction
 * that caused the event, claimed and delivered by the worker (event_id stays the same on every try).
 */
export async function up(db: Kysely<any>, { id, pk, ref, ts }: MigrationContext): Promise<void> {
  await db.schema
    .alterTable('notify_sequences')
    .addColumn('trigger_list_id', ref, (c) => c.references('notify_lists.id').onDelete('set null'))
    .execute();
  await db.schema.createIndex('notify_sequences_trigger').on('notify_sequences').columns(['trigger_list_id']).execute();
  await db.schema
    .createTable('notify_outbound_events')
    .addColumn('id', id, pk)
    .$call(required(['event_id', 'text'], ['endpoint', 'text'], ['type', 'text'], ['body', 'text']))
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending'))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', ts, (c) => c.notNull())
    .addColumn('claim_token', 'text')
    .addColumn('locked_at', ts)
    .addColumn('last_error', 'text')
    .addColumn('delivered_at', ts)
    .$call(required(['created_at', ts], ['updated_at', ts]))
    .addUniqueConstraint('notify_outbound_events_event_endpoint', ['event_id', 'endpoint'])
    .execute();
  await db.schema.createIndex('notify_outbound_events_due').on('notify_outbound_events').columns(['status', 'next_attempt_at']).execute();
}
