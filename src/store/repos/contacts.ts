import { type Expression, type Kysely, type Selectable, type SqlBool, sql } from 'kysely';
import type { ContactFilter, ContactsRepo, ContactWrite } from '../../core/storage/contacts.ts';
import { hashToken } from '../../core/tokens.ts';
import type { Contact, ContactStatus } from '../../core/types.ts';
import type { StoreDialect } from '../dialect.ts';
import { parseJson, toDate } from '../rows.ts';
import type { ContactsTable, Database } from '../schema.ts';
import { type ContactsScope, segmentCondition, subscribersOf } from '../segments.ts';
import type { Outbox } from '../outbox.ts';
import { contactWrites, findListNamed } from './contact-writes.ts';
import { type Join, recordJoins } from './joins.ts';
import { eraseEvents, exportPage, forgetSuppressedRecipient, listId, personRows } from './person-data.ts';

type Row = Selectable<ContactsTable>;

export function createContactsRepo(db: Kysely<Database>, dialect: StoreDialect, outbox: Outbox): ContactsRepo {
  /** the lists each contact is subscribed to, by contact id */
  const listsOf = async (ids: number[]) => {
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
  const contactOf = (row: Row, lists: string[]): Contact => ({
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
  const toContact = async (row: Row | undefined): Promise<Contact | undefined> => row && contactOf(row, (await listsOf([Number(row.id)])).get(Number(row.id))!);
  /** every part of the filter but the list, over `c` */
  const conditions = (scope: ContactsScope, f: ContactFilter) => {
    const parts: Expression<SqlBool>[] = [];
    if (f.status !== undefined) parts.push(scope('c.status', '=', f.status));
    if (f.search) {
      parts.push(scope.or([scope(dialect.position(sql.ref('c.email_key'), f.search), '>', 0), scope(dialect.position(dialect.lower(sql.ref('c.name')), f.search), '>', 0)]));
    }
    if (f.segment) parts.push(segmentCondition(scope, dialect, f.segment));
    return scope.and(parts);
  };
  const filtered = (f: ContactFilter) =>
    db.selectFrom('notify_contacts as c').where((eb) => {
      const scope = eb as unknown as ContactsScope;
      return f.list === undefined ? conditions(scope, f) : scope.and([scope('c.id', 'in', subscribersOf(scope, dialect, f.list)), conditions(scope, f)]);
    });
  /** the id of the list of that name in any case (the exact spelling first), null when there is none */
  const listIdNamed = async (name: string) => {
    const row = await findListNamed(db, dialect, name);
    return row ? Number(row.id) : null;
  };
  /**
   * A page of a list's subscribers walks the membership index (list_id, status, contact_id) from
   * the cursor, joining each member's contact: a page costs the same at the end of a 100,000-member
   * list as at its start.
   */
  const listPage = (f: ContactFilter, listId: number, afterId: number, limit: number) =>
    db
      .selectFrom('notify_list_members as m')
      .innerJoin('notify_contacts as c', 'c.id', 'm.contact_id')
      .selectAll('c')
      // the id itself, not a subquery: the planner then knows the list and walks its part of the index
      .where('m.list_id', '=', listId)
      .where('m.status', '=', 'subscribed')
      .where('m.contact_id', '>', afterId)
      .where((eb) => conditions(eb as unknown as ContactsScope, f))
      .orderBy('m.contact_id')
      .limit(limit);
  const byId = (id: number) => db.selectFrom('notify_contacts').selectAll().where('id', '=', id).executeTakeFirst();

  const { insertNew, insertMembers, listIdOf, updateExisting, writeOne } = contactWrites(dialect);

  return {
    async page(f, afterId, limit) {
      const listId = f.list === undefined ? undefined : await listIdNamed(f.list);
      if (listId === null) return [];
      const rows = await (listId === undefined ? filtered(f).selectAll('c').where('c.id', '>', afterId).orderBy('c.id').limit(limit) : listPage(f, listId, afterId, limit)).execute();
      const lists = await listsOf(rows.map((r) => Number(r.id)));
      return rows.map((r) => contactOf(r, lists.get(Number(r.id))!));
    },
    async count(f) {
      const row = await filtered(f).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst();
      return Number(row?.n ?? 0);
    },
    async upsert(input, now) {
      const written = await db.transaction().execute(async (trx) => {
        const joins: Join[] = [];
        const contactId = await writeOne(trx, input, now, new Map(), joins);
        return { contactId, events: contactId === undefined ? [] : await recordJoins(trx, outbox, joins, now) };
      });
      const id = written.contactId;
      if (id === undefined) return this.upsert(input, now);
      outbox.publish(written.events);
      return (await toContact(await byId(id)))!;
    },
    async upsertMany(inputs, now) {
      if (inputs.length === 0) return;
      const { lost, events } = await db.transaction().execute(async (trx) => {
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
        const members: Parameters<typeof insertMembers>[1] = [];
        for (const input of fresh.values()) {
          const id = ids.get(input.email_key);
          if (id === undefined) {
            retry.push(input); // another writer inserted it meanwhile
            continue;
          }
          for (const name of new Set(input.lists ?? [])) members.push({ list_id: await listIdOf(trx, name, now, listIds), contact_id: id, created_at: now });
        }
        await insertMembers(trx, members, joins);
        const gone = await updateExisting(trx, [...known.values()], now, listIds, joins);
        for (const input of [...gone, ...repeated]) if ((await writeOne(trx, input, now, listIds, joins)) === undefined) retry.push(input);
        return { lost: retry, events: await recordJoins(trx, outbox, joins, now) };
      });
      outbox.publish(events);
      for (const input of lost) await this.upsert(input, now);
    },
    async getManyByEmailKey(keys) {
      const out = new Map<string, Contact>();
      if (keys.length === 0) return out;
      const rows = await db.selectFrom('notify_contacts').selectAll().where('email_key', 'in', [...new Set(keys)]).execute();
      const lists = await listsOf(rows.map((r) => Number(r.id)));
      for (const r of rows) out.set(r.email_key, contactOf(r, lists.get(Number(r.id))!));
      return out;
    },
    async tombstonesForEmails(hashes) {
      const out = new Map<string, string>();
      if (hashes.length === 0) return out;
      const rows = await db.selectFrom('notify_tombstones').select(['email_hash', 'status']).where('email_hash', 'in', [...new Set(hashes)]).orderBy('created_at', 'asc').execute();
      // the latest erasure of an address wins, as in tombstoneForEmail
      for (const r of rows) if (r.email_hash) out.set(r.email_hash, r.status);
      return out;
    },
    async getById(id) {
      return toContact(await byId(id));
    },
    async recipients(ids) {
      if (ids.length === 0) return new Map();
      const rows = await db
        .selectFrom('notify_contacts')
        .select(['id', 'email', 'name', 'status', 'unsubscribe_token', 'attributes'])
        .where('id', 'in', [...new Set(ids)])
        .execute();
      return new Map(rows.map((r) => [Number(r.id), { ...r, id: Number(r.id), attributes: parseJson(r.attributes) }]));
    },
    async getByEmailKey(emailKey) {
      return toContact(await db.selectFrom('notify_contacts').selectAll().where('email_key', '=', emailKey).executeTakeFirst());
    },
    async getByUnsubscribeToken(token) {
      return toContact(await db.selectFrom('notify_contacts').selectAll().where('unsubscribe_token', '=', token).executeTakeFirst());
    },
    async tombstoneForToken(tokenHash) {
      return db.selectFrom('notify_tombstones').select('status').where('token_hash', '=', tokenHash).executeTakeFirst();
    },
    async tombstoneForEmail(emailHash) {
      return db.selectFrom('notify_tombstones').select('status').where('email_hash', '=', emailHash).orderBy('created_at', 'desc').executeTakeFirst();
    },
    async setStatus(id, status, now) {
      await db.updateTable('notify_contacts').set({ status, updated_at: now }).where('id', '=', id).execute();
    },
    async changeStatus(id, status, now) {
      const res = await db.updateTable('notify_contacts').set({ status, updated_at: now }).where('id', '=', id).where('status', '<>', status).executeTakeFirst();
      return Number(res.numUpdatedRows) > 0;
    },
    async statusesByEmailKey(keys) {
      const out = new Map<string, { id: number; status: string }>();
      if (keys.length === 0) return out;
      const rows = await db.selectFrom('notify_contacts').select(['id', 'email_key', 'status']).where('email_key', 'in', keys).execute();
      for (const r of rows) out.set(r.email_key, { id: Number(r.id), status: r.status });
      return out;
    },
    async erase(id, emailHash, now) {
      return db.transaction().execute(async (trx) => {
        // Locks first, the contact and then their sends, so the event writers in flight commit
        // before this reads the events (they hold a KEY SHARE on the contact, or the tracking writer
        // its sends), and those that come later find the person gone (or the sends without them).
        const person = trx.selectFrom('notify_contacts').select(['unsubscribe_token', 'status', 'email']).where('id', '=', id);
        const row = await (dialect.kind === 'postgres' ? person.forUpdate() : person).executeTakeFirst();
        if (!row) return false;
        await dialect.lockForUpdate(trx.selectFrom('notify_sends').select('id').where('contact_id', '=', id).orderBy('id')).execute();
        // outgoing webhook bodies name the address: those not yet delivered are dropped with the person, and delivered ones are no longer kept
        await trx
          .deleteFrom('notify_outbound_events')
          .where(dialect.position(sql.ref('body'), `"email":${JSON.stringify(row.email)}`), '>', 0)
          .execute();
        await trx
          .insertInto('notify_tombstones')
          .values({ token_hash: hashToken(row.unsubscribe_token), email_hash: emailHash, status: row.status, created_at: now })
          .onConflict((oc) => oc.column('token_hash').doNothing())
          .execute();
        // Sends and events outlive the person for campaign totals, but carry nothing that identifies
        // them: no address, no subject (it may be personalised), no provider error or message id (both
        // can name the address in the provider's logs), no event metadata (an IP, a user agent).
        await eraseEvents(trx, id);
        await trx.updateTable('notify_sends').set({ to_email: '', subject: '', error: null, message_id: null, contact_id: null }).where('contact_id', '=', id).execute();
        await forgetSuppressedRecipient(trx, id);
        // memberships, enrollments and the consent columns go with the row (ON DELETE CASCADE)
        await trx.deleteFrom('notify_contacts').where('id', '=', id).execute();
        return true;
      });
    },
    exportPerson: (id) => personRows(db, id),
    exportPage: (after, limit, filter) => exportPage(db, after, limit, filter),
    listId: (name) => listId(db, name),
  };
}
