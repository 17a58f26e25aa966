import type { Kysely } from 'kysely';
import type { ContactsRepo, ContactWrite } from '../../../core/storage/contacts.ts';
import type { Contact } from '../../../core/types.ts';
import type { StoreDialect } from '../../dialect.ts';
import type { Outbox } from '../../outbox.ts';
import type { Database } from '../../schema.ts';
import { insertMembers, insertNew, listIdOf, updateExisting, writeOne } from '../contact-writes.ts';
import { type Join, recordJoins } from '../joins.ts';
import { createsSuppressed, recordCreatedSuppressed } from './created-suppressed.ts';
import { contactById, toContact } from './rows.ts';

/** writes of contacts: one or a batch by address (their list joins announced once committed), and status changes */
export function contactUpserts(db: Kysely<Database>, dialect: StoreDialect, outbox: Outbox): Pick<ContactsRepo, 'upsert' | 'upsertMany' | 'setStatus' | 'changeStatus'> {
  const upsert = async (input: ContactWrite, now: number): Promise<Contact> => {
    const written = await db.transaction().execute(async (trx) => {
      const joins: Join[] = [];
      const created: number[] = [];
      const contactId = await writeOne(dialect, trx, input, now, new Map(), joins, created);
      if (contactId === undefined) return { contactId, events: [] };
      const suppressed = createsSuppressed(input) ? await recordCreatedSuppressed(trx, dialect, outbox, created, now) : [];
      return { contactId, events: [...suppressed, ...(await recordJoins(trx, outbox, joins, now))] };
    });
    const id = written.contactId;
    if (id === undefined) return upsert(input, now);
    outbox.publish(written.events);
    return (await toContact(db, await contactById(db, id)))!;
  };

  return {
    upsert,
    async upsertMany(inputs, now) {
      if (inputs.length === 0) return;
      const { lost, events } = await db.transaction().execute((trx) => writeBatch(dialect, trx, outbox, inputs, now));
      outbox.publish(events);
      for (const input of lost) await upsert(input, now);
    },
    async setStatus(id, status, now) {
      await db.updateTable('notify_contacts').set({ status, updated_at: now }).where('id', '=', id).execute();
    },
    async changeStatus(id, status, now) {
      const res = await db.updateTable('notify_contacts').set({ status, updated_at: now }).where('id', '=', id).where('status', '<>', status).executeTakeFirst();
      return Number(res.numUpdatedRows) > 0;
    },
  };
}

/**
 * upsertMany's writes inside its transaction: the inputs another writer inserted meanwhile (to write
 * again, one by one, after the commit) and the events to publish after it.
 */
async function writeBatch(dialect: StoreDialect, trx: Kysely<Database>, outbox: Outbox, inputs: ContactWrite[], now: number) {
    const listIds = new Map<string, number>();
    const joins: Join[] = [];
    const existing = new Set((await trx.selectFrom('notify_contacts').select('email_key').where('email_key', 'in', [...new Set(inputs.map((i) => i.email_key))]).execute()).map((r) => r.email_key));
    // New addresses (each once) in one multi-row INSERT, existing ones in one UPDATE, their
    // memberships in one INSERT each; an address given twice in the call, row by row after them.
    const fresh = new Map<string, ContactWrite>();
    const known = new Map<string, ContactWrite>();
    const repeated: ContactWrite[] = [];
    for (const input of inputs) {
      if (fresh.has(input.email_key) || known.has(input.email_key)) repeated.push(input);
      else (existing.has(input.email_key) ? known : fresh).set(input.email_key, input);
    }
    const retry: ContactWrite[] = [];
    const ids = await insertNew(trx, [...fresh.values()], now);
    const created = [...fresh.values()].filter(createsSuppressed).flatMap((input) => ids.get(input.email_key) ?? []);
    const members: Parameters<typeof insertMembers>[1] = [];
    for (const input of fresh.values()) {
      const id = ids.get(input.email_key);
      if (id === undefined) {
        retry.push(input); // another writer inserted it meanwhile
        continue;
      }
      for (const name of new Set(input.lists ?? [])) members.push({ list_id: await listIdOf(dialect, trx, name, now, listIds), contact_id: id, created_at: now });
    }
    await insertMembers(trx, members, joins);
    const gone = await updateExisting(dialect, trx, [...known.values()], now, listIds, joins);
    for (const input of [...gone, ...repeated]) {
      const made: number[] = [];
      if ((await writeOne(dialect, trx, input, now, listIds, joins, made)) === undefined) retry.push(input);
      else if (createsSuppressed(input)) created.push(...made);
    }
    const suppressed = await recordCreatedSuppressed(trx, dialect, outbox, created, now);
    return { lost: retry, events: [...suppressed, ...(await recordJoins(trx, outbox, joins, now))] };
}
