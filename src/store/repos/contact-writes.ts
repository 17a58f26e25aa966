import { type Kysely, sql } from 'kysely';
import type { ContactWrite } from '../../core/storage/contacts.ts';
import type { ContactStatus } from '../../core/types.ts';
import type { StoreDialect } from '../dialect.ts';
import { parseJson } from '../rows.ts';
import type { Database } from '../schema.ts';
import type { Join } from './joins.ts';

/** The list of that name in any case, the exact spelling first; undefined when there is none. */
export function findListNamed(db: Kysely<Database>, dialect: StoreDialect, name: string) {
  return db
    .selectFrom('notify_lists')
    .select('id')
    .where(dialect.lower(sql.ref('name')), '=', name.toLowerCase())
    .orderBy(sql`case when name = ${name} then 0 else 1 end`)
    .orderBy('id')
    .executeTakeFirst();
}

/** The writes of contacts.upsert and upsertMany (an import batch), inside the caller's transaction. */
/** rows per multi-row INSERT: 14 parameters a contact stays far below both engines' limits */
export const MULTI_ROW = 500;

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

export function contactWrites(dialect: StoreDialect) {
  /** the list of that name in any case, created when there is none */
  const listNamed = async (trx: Kysely<Database>, name: string, now: number) => {
    const find = () => findListNamed(trx, dialect, name);
    const found = await find();
    if (found) return found;
    await trx.insertInto('notify_lists').values({ name, created_at: now }).onConflict((oc) => oc.column('name').doNothing()).execute();
    return (await find())!;
  };

  const listIdOf = async (trx: Kysely<Database>, name: string, now: number, cache: Map<string, number>) => {
    let id = cache.get(name);
    if (id === undefined) cache.set(name, (id = Number((await listNamed(trx, name, now)).id)));
    return id;
  };

  /** inserts contacts that do not exist yet; their ids by email key (an address another writer inserted meanwhile is missing) */
  const insertNew = async (trx: Kysely<Database>, inputs: ContactWrite[], now: number) => {
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
  };

  /**
   * One upsert's writes inside the caller's transaction; the contact's id, or undefined when another
   * writer inserted the address meanwhile (the caller retries it as an update). `listIds` caches
   * list ids by name across the rows of one import batch; the lists it newly joined are added to `joins`.
   */
  const writeOne = async (trx: Kysely<Database>, input: ContactWrite, now: number, listIds: Map<string, number>, joins: Join[]): Promise<number | undefined> => {
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
        } else {
          contactId = Number(existing.id);
          const status = input.status ?? (input.lift?.includes(existing.status as ContactStatus) ? input.initialStatus : undefined);
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
          const listId = await listIdOf(trx, name, now, listIds);
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
  };
  return { insertNew, listIdOf, writeOne };
}
