import { type Kysely, type Selectable, sql } from 'kysely';
import type { ContactWrite } from '../../core/storage/contacts.ts';
import type { ContactStatus } from '../../core/types.ts';
import { columnList, type StoreDialect } from '../dialect.ts';
import { parseJson } from '../rows.ts';
import type { ContactsTable, Database } from '../schema.ts';
import type { Join } from './joins.ts';

/** The list of that name in any case, the exact spelling first; undefined when there is none. */
export function findListNamed(db: Kysely<Database>, dialect: StoreDialect, name: string) {
  return db
    .selectFrom('notify_lists')
    .select(['id', 'name', 'public'])
    .where(dialect.lower(sql.ref('name')), '=', name.toLowerCase())
    .orderBy(sql`case when name = ${name} then 0 else 1 end`)
    .orderBy('id')
    .executeTakeFirst();
}

/** rows per multi-row INSERT: 14 parameters a contact stays far below both engines' limits */
export const MULTI_ROW = 500;

type Member = { list_id: number; contact_id: number; created_at: number };

/** The columns an update of an existing contact may change, as the batched UPDATE reads them. */
const UPDATE_COLUMNS = columnList({ id: 'bigint', name: 'text', status: 'text', attributes: 'json', consent_at: 'bigint', consent_source: 'text', consent_ip: 'text', confirm_token_hash: 'text', confirm_sent_at: 'bigint', updated_at: 'bigint' });

function newRow(input: ContactWrite, now: number) {
  return {
    email: input.email,
    email_key: input.email_key,
    name: input.name ?? null,
    status: input.status ?? input.initialStatus,
    unsubscribe_token: input.unsubscribe_token,
    attributes: JSON.stringify(input.attributes ?? {}),
    consent_at: input.consent?.at ?? null,
    consent_source: input.consent?.source ?? null,
    consent_ip: input.consent?.ip ?? null,
    confirm_token_hash: input.confirmation?.tokenHash ?? null,
    confirm_sent_at: input.confirmation?.at ?? null,
    created_at: now,
    updated_at: now,
  };
}

/** the list of that name in any case, created when there is none */
async function listNamed(dialect: StoreDialect, trx: Kysely<Database>, name: string, now: number) {
  const find = () => findListNamed(trx, dialect, name);
  const found = await find();
  if (found) return found;
  await trx.insertInto('notify_lists').values({ name, created_at: now }).onConflict((oc) => oc.column('name').doNothing()).execute();
  return (await find())!;
}

/** the id of the list of that name (created when there is none), cached by name for one batch */
export async function listIdOf(dialect: StoreDialect, trx: Kysely<Database>, name: string, now: number, cache: Map<string, number>) {
  let id = cache.get(name);
  if (id === undefined) cache.set(name, (id = Number((await listNamed(dialect, trx, name, now)).id)));
  return id;
}

/** inserts contacts that do not exist yet; their ids by email key (an address another writer inserted meanwhile is missing) */
export async function insertNew(trx: Kysely<Database>, inputs: ContactWrite[], now: number) {
  const ids = new Map<string, number>();
  for (let i = 0; i < inputs.length; i += MULTI_ROW) {
    const rows = await trx
      .insertInto('notify_contacts')
      .values(inputs.slice(i, i + MULTI_ROW).map((input) => newRow(input, now)))
      .onConflict((oc) => oc.column('email_key').doNothing())
      .returning(['id', 'email_key'])
      .execute();
    for (const r of rows) ids.set(r.email_key, Number(r.id));
  }
  return ids;
}

/**
 * One upsert's writes inside the caller's transaction; the contact's id, or undefined when another
 * writer inserted the address meanwhile (the caller retries it as an update). `listIds` caches
 * list ids by name across the rows of one import batch; the lists it newly joined are added to
 * `joins`, the id of a contact it created to `created`.
 */
export async function writeOne(dialect: StoreDialect, trx: Kysely<Database>, input: ContactWrite, now: number, listIds: Map<string, number>, joins: Join[], created: number[]): Promise<number | undefined> {
  const existing = await trx.selectFrom('notify_contacts').selectAll().where('email_key', '=', input.email_key).executeTakeFirst();
  let contactId: number;
  if (!existing) {
    const inserted = await trx
      .insertInto('notify_contacts')
      .values(newRow(input, now))
      .onConflict((oc) => oc.column('email_key').doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!inserted) return undefined; // lost a race with another writer: retry as an update
    contactId = Number(inserted.id);
    created.push(contactId);
  } else {
    contactId = Number(existing.id);
    const status = input.status ?? (input.lift?.includes(existing.status as ContactStatus) ? input.initialStatus : undefined);
    // only what the input gives: the row is not locked, and a concurrent unsubscribe must stand
    await trx
      .updateTable('notify_contacts')
      .set({
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(status !== undefined ? { status } : {}),
        ...(input.attributes ? { attributes: JSON.stringify({ ...parseJson(existing.attributes), ...input.attributes }) } : {}),
        ...(input.consent ? { consent_at: input.consent.at, consent_source: input.consent.source, consent_ip: input.consent.ip } : {}),
        ...(input.confirmation ? { confirm_token_hash: input.confirmation.tokenHash, confirm_sent_at: input.confirmation.at } : {}),
        updated_at: now,
      })
      .where('id', '=', contactId)
      .execute();
  }
  for (const name of new Set(input.lists ?? [])) {
    const listId = await listIdOf(dialect, trx, name, now, listIds);
    // a member who left this list stays out: only an explicit subscribe brings them back
    const joined = await trx
      .insertInto('notify_list_members')
      .values({ list_id: listId, contact_id: contactId, created_at: now })
      .onConflict((oc) => oc.columns(['list_id', 'contact_id']).doNothing())
      .returning('list_id')
      .executeTakeFirst();
    if (joined) joins.push({ contactId, listId });
  }
  return contactId;
}

/** adds the memberships that do not exist yet; the ones it added go to `joins` */
export async function insertMembers(trx: Kysely<Database>, members: Member[], joins: Join[]) {
  for (let i = 0; i < members.length; i += MULTI_ROW) {
    const joined = await trx
      .insertInto('notify_list_members')
      .values(members.slice(i, i + MULTI_ROW))
      .onConflict((oc) => oc.columns(['list_id', 'contact_id']).doNothing())
      .returning(['list_id', 'contact_id'])
      .execute();
    for (const r of joined) joins.push({ contactId: Number(r.contact_id), listId: Number(r.list_id) });
  }
}

/**
 * Updates existing contacts (each address once) with one UPDATE per MULTI_ROW rows and adds their
 * memberships: what writeOne does for each, without a round trip per row. The rows are locked
 * in id order while the new values are worked out from them, so a concurrent write waits rather
 * than being lost, and two batches touching the same contacts never deadlock. Returns the inputs
 * whose contact is gone (erased meanwhile), for the caller to write as new; the lists newly
 * joined go to `joins`.
 */
export async function updateExisting(dialect: StoreDialect, trx: Kysely<Database>, inputs: ContactWrite[], now: number, listIds: Map<string, number>, joins: Join[]) {
  if (inputs.length === 0) return [];
  const stored = new Map<string, Selectable<ContactsTable>>();
  for (let i = 0; i < inputs.length; i += MULTI_ROW) {
    const keys = inputs.slice(i, i + MULTI_ROW).map((input) => input.email_key);
    const rows = await dialect.lockForUpdate(trx.selectFrom('notify_contacts').selectAll().where('email_key', 'in', keys).orderBy('id')).execute();
    for (const row of rows) stored.set(row.email_key, row);
  }
  const gone: ContactWrite[] = [];
  const rows: ReturnType<typeof updated>[] = [];
  const members: Member[] = [];
  for (const input of inputs) {
    const existing = stored.get(input.email_key);
    if (!existing) {
      gone.push(input);
      continue;
    }
    rows.push(updated(existing, input, now));
    // a member who left a list stays out: only an explicit subscribe brings them back (DO NOTHING)
    for (const name of new Set(input.lists ?? [])) members.push({ list_id: await listIdOf(dialect, trx, name, now, listIds), contact_id: Number(existing.id), created_at: now });
  }
  const set = sql.raw(UPDATE_COLUMNS.filter((c) => c.name !== 'id').map((c) => `${c.name} = v.${c.name}`).join(', '));
  for (let i = 0; i < rows.length; i += MULTI_ROW) {
    const chunk = rows.slice(i, i + MULTI_ROW).map((r) => ({ ...r, attributes: dialect.jsonRowValue(r.attributes) }));
    await sql`update notify_contacts as c set ${set} from (${dialect.jsonRows(JSON.stringify(chunk), UPDATE_COLUMNS)}) as v where c.id = v.id`.execute(trx);
  }
  await insertMembers(trx, members, joins);
  return gone;
}

/**
 * The stored contact after an upsert: the name when one is given, attributes merged, the status when
 * given (or lifted), consent and a confirmation link when given; everything else as stored.
 */
function updated(existing: Selectable<ContactsTable>, input: ContactWrite, now: number) {
  const status = input.status ?? (input.lift?.includes(existing.status as ContactStatus) ? input.initialStatus : existing.status);
  return {
    id: Number(existing.id),
    name: input.name !== undefined ? input.name : existing.name,
    status,
    attributes: input.attributes ? { ...parseJson(existing.attributes), ...input.attributes } : parseJson(existing.attributes),
    consent_at: input.consent ? input.consent.at : nullableNumber(existing.consent_at),
    consent_source: input.consent ? input.consent.source : existing.consent_source,
    consent_ip: input.consent ? input.consent.ip : existing.consent_ip,
    confirm_token_hash: input.confirmation ? input.confirmation.tokenHash : existing.confirm_token_hash,
    confirm_sent_at: input.confirmation ? input.confirmation.at : nullableNumber(existing.confirm_sent_at),
    updated_at: now,
  };
}

/** PostgreSQL returns bigint columns as strings */
const nullableNumber = (v: number | string | null) => (v === null ? null : Number(v));
