import type { Kysely } from 'kysely';
import type { ContactWrite } from '../../../core/storage/contacts.ts';
import type { OutboundEvent } from '../../../core/storage/outbound.ts';
import { type SuppressReason, suppressionRecords } from '../../../core/suppression.ts';
import { isSuppressedStatus, SUPPRESSED_STATUSES } from '../../../core/types.ts';
import type { StoreDialect } from '../../dialect.ts';
import type { Outbox } from '../../outbox.ts';
import type { Database } from '../../schema.ts';
import { createEventsRepo } from '../events.ts';
import { contactsOf } from './rows.ts';

const CHUNK = 500;

/** true when the write creates a suppressed contact (a new address given, or coming back with, an opt-out) */
export const createsSuppressed = (input: ContactWrite) => isSuppressedStatus(input.status ?? input.initialStatus);

/**
 * Contacts this transaction created with a suppressed status get what the suppression flow writes
 * for a contact changed to it (core/suppression.ts): the event row and the application event
 * (`created: true`), in the transaction that creates them, so the event commits with its cause.
 * Nothing else of the flow applies: a new contact has no enrollment and no waiting send. Returns
 * the events to publish after commit.
 */
export async function recordCreatedSuppressed(trx: Kysely<Database>, dialect: StoreDialect, outbox: Outbox, ids: number[], now: number): Promise<OutboundEvent[]> {
  const events: OutboundEvent[] = [];
  for (let i = 0; i < ids.length; i += CHUNK) {
    const rows = await trx.selectFrom('notify_contacts').selectAll().where('id', 'in', ids.slice(i, i + CHUNK)).where('status', 'in', SUPPRESSED_STATUSES).orderBy('id').execute();
    const records = (await contactsOf(trx, rows)).map((c) => suppressionRecords(c, c.status as SuppressReason, { source: 'api', created: true }, now));
    if (records.length === 0) continue;
    await createEventsRepo(trx, dialect).insertMany(records.map((r) => r.row));
    events.push(...records.map((r) => r.event));
  }
  await outbox.write(trx, events, now);
  return events;
}
