import type { Kysely } from 'kysely';
import type { OutboundEvent } from '../../core/storage/outbound.ts';
import type { Outbox } from '../outbox.ts';
import type { Database } from '../schema.ts';

export interface Join {
  contactId: number;
  listId: number;
}

const CHUNK = 500;

/**
 * What joining a list sets off, inside the transaction of the join itself: the contact (when it is
 * `subscribed` by then: a pending double opt-in waits for its confirmation, a suppressed contact
 * never counts) is enrolled in every sequence that list triggers, and `notify:contact.subscribed`
 * is written. Enrolment is once per contact and sequence, ever: the unique (sequence, contact)
 * pair decides, so two processes joining the same contact at once, or leaving and rejoining, never
 * enrol twice. Returns the events to publish after commit.
 */
export async function recordJoins(trx: Kysely<Database>, outbox: Outbox, joins: Join[], now: number): Promise<OutboundEvent[]> {
  if (joins.length === 0) return [];
  const listIds = [...new Set(joins.map((j) => j.listId))];
  const triggered = await trx
    .selectFrom('notify_sequences as s')
    .innerJoin('notify_steps as st', (j) => j.onRef('st.sequence_id', '=', 's.id').on('st.position', '=', 0))
    .select(['s.id', 's.trigger_list_id', 'st.delay_minutes'])
    .where('s.trigger_list_id', 'in', listIds)
    .execute();
  const announce = outbox.wants('notify:contact.subscribed');
  if (triggered.length === 0 && !announce) return [];
  const contacts = new Map<number, { email: string; status: string }>();
  const contactIds = [...new Set(joins.map((j) => j.contactId))];
  for (let i = 0; i < contactIds.length; i += CHUNK) {
    const rows = await trx.selectFrom('notify_contacts').select(['id', 'email', 'status']).where('id', 'in', contactIds.slice(i, i + CHUNK)).execute();
    for (const r of rows) contacts.set(Number(r.id), r);
  }
  const counted = joins.filter((j) => contacts.get(j.contactId)?.status === 'subscribed');
  const enrolments = counted.flatMap((j) =>
    triggered
      .filter((s) => Number(s.trigger_list_id) === j.listId)
      .map((s) => ({
        sequence_id: Number(s.id),
        contact_id: j.contactId,
        status: 'active',
        step_index: 0,
        attempts: 0,
        next_send_at: now + Number(s.delay_minutes) * 60_000,
        created_at: now,
        updated_at: now,
      })),
  );
  for (let i = 0; i < enrolments.length; i += CHUNK) {
    await trx
      .insertInto('notify_enrollments')
      .values(enrolments.slice(i, i + CHUNK))
      .onConflict((oc) => oc.columns(['sequence_id', 'contact_id']).doNothing())
      .execute();
  }
  if (!announce || counted.length === 0) return [];
  const names = new Map((await trx.selectFrom('notify_lists').select(['id', 'name']).where('id', 'in', listIds).execute()).map((r) => [Number(r.id), r.name]));
  const events: OutboundEvent[] = counted.map((j) => ({
    type: 'notify:contact.subscribed',
    data: { contact: { id: j.contactId, email: contacts.get(j.contactId)!.email }, list: names.get(j.listId) ?? null },
  }));
  await outbox.write(trx, events, now);
  return events;
}
