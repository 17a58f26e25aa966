import type { Kysely, Selectable } from 'kysely';
import type { Contact, ContactStatus } from '../../../core/types.ts';
import { parseJson, toDate } from '../../rows.ts';
import type { ContactsTable, Database } from '../../schema.ts';

export type ContactRow = Selectable<ContactsTable>;

/** the lists each contact is subscribed to, by contact id */
export const listsOf = async (db: Kysely<Database>, ids: number[]) => {
  const out = new Map<number, string[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return out;
  const rows = await db
    .selectFrom('notify_list_members')
    .innerJoin('notify_lists', 'notify_lists.id', 'notify_list_members.list_id')
    .select(['notify_list_members.contact_id', 'notify_lists.name'])
    .where('notify_list_members.contact_id', 'in', ids)
    .where('notify_list_members.status', '=', 'subscribed')
    .orderBy('notify_lists.name')
    .execute();
  for (const r of rows) out.get(Number(r.contact_id))?.push(r.name);
  return out;
};

export const contactOf = (row: ContactRow, lists: string[]): Contact => ({
  id: Number(row.id),
  email: row.email,
  name: row.name,
  status: row.status as ContactStatus,
  unsubscribe_token: row.unsubscribe_token,
  attributes: parseJson(row.attributes),
  lists,
  consent_at: toDate(row.consent_at),
  consent_source: row.consent_source,
  created_at: toDate(row.created_at)!,
  updated_at: toDate(row.updated_at)!,
});

/** several rows as contacts, their lists read in one query */
export const contactsOf = async (db: Kysely<Database>, rows: ContactRow[]) => {
  const lists = await listsOf(db, rows.map((r) => Number(r.id)));
  return rows.map((r) => contactOf(r, lists.get(Number(r.id))!));
};

export const toContact = async (db: Kysely<Database>, row: ContactRow | undefined): Promise<Contact | undefined> =>
  row && contactOf(row, (await listsOf(db, [Number(row.id)])).get(Number(row.id))!);

export const contactById = (db: Kysely<Database>, id: number) => db.selectFrom('notify_contacts').selectAll().where('id', '=', id).executeTakeFirst();
