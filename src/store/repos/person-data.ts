import type { ExpressionBuilder, Kysely } from 'kysely';
import type { ExportFilter, ExportRow, PersonRows } from '../../core/storage/contacts.ts';
import type { ContactStatus } from '../../core/types.ts';
import { BACKFILL_KEY } from '../migrations/019_events_contact_from_send.ts';
import { parseJson, toDate } from '../rows.ts';
import type { Database } from '../schema.ts';
import { statusChangesOf } from './history.ts';

/** Whether a membership row counts as "in the list": rows without a per-list status, or subscribed ones. */
const isMember = (row: Record<string, unknown>) => row.status === undefined || row.status === null || row.status === 'subscribed';

/**
 * Up to `limit` contacts after id `after`, in id order (keyset: each page costs the same however
 * deep); `next` is the cursor of the following page, undefined after the last.
 */
export async function exportPage(db: Kysely<Database>, after: number, limit: number, filter: ExportFilter): Promise<{ rows: ExportRow[]; next?: number }> {
  let q = db.selectFrom('notify_contacts').select(['id', 'email', 'name', 'status', 'created_at', 'attributes']).where('id', '>', after);
  if (filter.status) q = q.where('status', '=', filter.status);
  if (filter.list !== undefined) {
    const list = filter.list;
    q = q.where((eb) => eb.exists(eb.selectFrom('notify_list_members').selectAll().where('list_id', '=', list).whereRef('contact_id', '=', 'notify_contacts.id')));
  }
  const rows = await q.orderBy('id').limit(limit).execute();
  const lists = await listsOf(db, rows.map((r) => Number(r.id)));
  const page = rows
    .map((r) => ({
      id: Number(r.id),
      email: r.email,
      name: r.name,
      status: r.status as ContactStatus,
      created_at: toDate(r.created_at)!,
      attributes: parseJson(r.attributes),
      lists: (lists.get(Number(r.id)) ?? []).filter(isMember).map((m) => String(m.name)),
    }))
    .filter((r) => filter.list === undefined || (lists.get(r.id) ?? []).some((m) => m.list_id === filter.list && isMember(m)));
  return { rows: page, next: rows.length === limit ? Number(rows[rows.length - 1].id) : undefined };
}

async function listsOf(db: Kysely<Database>, ids: number[]): Promise<Map<number, Record<string, unknown>[]>> {
  const out = new Map<number, Record<string, unknown>[]>();
  if (ids.length === 0) return out;
  const rows = await ownedRows(db, MEMBERSHIPS, ids, 'notify_lists.name');
  for (const r of rows) {
    const row = { ...r, list_id: Number(r.list_id), contact_id: Number(r.contact_id) };
    out.set(row.contact_id, [...(out.get(row.contact_id) ?? []), row]);
  }
  return out;
}

/** A person's rows that belong to something named: memberships (of a list), enrollments (in a sequence). */
interface Owned {
  table: 'notify_list_members' | 'notify_enrollments';
  owner: 'notify_lists' | 'notify_sequences';
  key: 'list_id' | 'sequence_id';
  /** the column the owner's name comes back as */
  as: string;
}
const MEMBERSHIPS: Owned = { table: 'notify_list_members', owner: 'notify_lists', key: 'list_id', as: 'name' };
const ENROLLMENTS: Owned = { table: 'notify_enrollments', owner: 'notify_sequences', key: 'sequence_id', as: 'sequence' };

/** The rows of `ids`' contacts in `o.table`, each with its owner's name. */
async function ownedRows(db: Kysely<Database>, o: Owned, ids: number[], orderBy: string): Promise<Record<string, unknown>[]> {
  // the tables are chosen at run time, so the builder is typed loosely; the names in Owned are all it takes
  const loose = db as unknown as Kysely<Record<string, Record<string, unknown>>>;
  const { table, owner, key, as }: Record<keyof Owned, string> = o;
  return loose
    .selectFrom(table)
    .innerJoin(owner, `${owner}.id`, `${table}.${key}`)
    .selectAll(table)
    .select(`${owner}.name as ${as}`)
    .where(`${table}.contact_id`, 'in', ids)
    .orderBy(orderBy)
    .execute();
}

export async function listId(db: Kysely<Database>, name: string): Promise<number | undefined> {
  const row = await db.selectFrom('notify_lists').select('id').where('name', '=', name).executeTakeFirst();
  return row && Number(row.id);
}

/**
 * Every row that names the person: the contact, memberships, their sends, their events (those of
 * their sends among them), enrollments with the sequence.
 */
export async function personRows(db: Kysely<Database>, id: number): Promise<PersonRows | undefined> {
  const contact = await db.selectFrom('notify_contacts').selectAll().where('id', '=', id).executeTakeFirst();
  if (!contact) return undefined;
  const sends = await db.selectFrom('notify_sends').selectAll().where('contact_id', '=', id).orderBy('id').execute();
  const events = await db.selectFrom('notify_events').selectAll().where(await ofPerson(db, id)).orderBy('id').execute();
  const enrollments = await ownedRows(db, ENROLLMENTS, [id], 'notify_enrollments.id');
  const statusChanges = await statusChangesOf(db, id).orderBy('h.id').execute();
  return { contact, lists: (await listsOf(db, [id])).get(id) ?? [], sends, events, enrollments, statusChanges };
}

/**
 * The person's events, through notify_events_contact: every event of a send carries the send's
 * person (the writers fill it, migration 019 filled the older ones). Until that backfill is done
 * (a process that does not migrate, beside one whose backfill was interrupted), also the events of
 * their sends, found by a scan of the table.
 */
async function ofPerson(db: Kysely<Database>, id: number) {
  const backfilling = await db.selectFrom('notify_meta').select('key').where('key', '=', BACKFILL_KEY).executeTakeFirst();
  return (eb: ExpressionBuilder<Database, 'notify_events'>) =>
    backfilling ? eb.or([eb('contact_id', '=', id), eb('send_id', 'in', eb.selectFrom('notify_sends').select('id').where('contact_id', '=', id))]) : eb('contact_id', '=', id);
}

/** Strips the person's events of what identifies them (metadata: an IP, a user agent); run before their sends lose contact_id. */
export async function eraseEvents(db: Kysely<Database>, id: number): Promise<void> {
  await db
    .updateTable('notify_events')
    .set({ metadata: '{}', contact_id: null })
    .where(await ofPerson(db, id))
    .execute();
}

/**
 * One-off sends that left the person out record them in suppressed_recipients by contact id: the id
 * is dropped (the entry stays, so the send still shows that a recipient was left out and why).
 */
export async function forgetSuppressedRecipient(db: Kysely<Database>, id: number): Promise<void> {
  const rows = await db.selectFrom('notify_sends').select(['id', 'suppressed_recipients']).where('suppressed_recipients', 'is not', null).execute();
  for (const row of rows) {
    const list = parseJsonList(row.suppressed_recipients);
    if (!list.some((r) => r.contact_id === id)) continue;
    const kept = list.map((r) => (r.contact_id === id ? { ...r, contact_id: null } : r));
    await db.updateTable('notify_sends').set({ suppressed_recipients: JSON.stringify(kept) }).where('id', '=', Number(row.id)).execute();
  }
}

function parseJsonList(value: unknown): Record<string, unknown>[] {
  const parsed = typeof value === 'string' ? JSON.parse(value) : value;
  return Array.isArray(parsed) ? parsed : [];
}
