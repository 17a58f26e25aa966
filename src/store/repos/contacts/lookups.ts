import type { Kysely } from 'kysely';
import type { ContactsRepo } from '../../../core/storage/contacts.ts';
import type { Contact } from '../../../core/types.ts';
import { parseJson } from '../../rows.ts';
import type { Database } from '../../schema.ts';
import { contactById, contactOf, listsOf, toContact } from './rows.ts';

type Lookups = Pick<
  ContactsRepo,
  'getManyByEmailKey' | 'tombstonesForEmails' | 'getById' | 'recipients' | 'getByEmailKey' | 'getByUnsubscribeToken' | 'tombstoneForToken' | 'tombstoneForEmail' | 'statusesByEmailKey'
>;

/** reads of one contact or a few, by id, address, token, or the hashes an erasure leaves */
export function contactLookups(db: Kysely<Database>): Lookups {
  return {
    async getManyByEmailKey(keys) {
      const out = new Map<string, Contact>();
      if (keys.length === 0) return out;
      const rows = await db.selectFrom('notify_contacts').selectAll().where('email_key', 'in', [...new Set(keys)]).execute();
      const lists = await listsOf(db, rows.map((r) => Number(r.id)));
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
      // an id that is no integer is nobody's; PostgreSQL would refuse it in a bigint comparison
      if (!Number.isSafeInteger(id)) return undefined;
      return toContact(db, await contactById(db, id));
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
      return toContact(db, await db.selectFrom('notify_contacts').selectAll().where('email_key', '=', emailKey).executeTakeFirst());
    },
    async getByUnsubscribeToken(token) {
      return toContact(db, await db.selectFrom('notify_contacts').selectAll().where('unsubscribe_token', '=', token).executeTakeFirst());
    },
    async tombstoneForToken(tokenHash) {
      return db.selectFrom('notify_tombstones').select('status').where('token_hash', '=', tokenHash).executeTakeFirst();
    },
    async tombstoneForEmail(emailHash) {
      return db.selectFrom('notify_tombstones').select('status').where('email_hash', '=', emailHash).orderBy('created_at', 'desc').executeTakeFirst();
    },
    async statusesByEmailKey(keys) {
      const out = new Map<string, { id: number; status: string }>();
      if (keys.length === 0) return out;
      const rows = await db.selectFrom('notify_contacts').select(['id', 'email_key', 'status']).where('email_key', 'in', keys).execute();
      for (const r of rows) out.set(r.email_key, { id: Number(r.id), status: r.status });
      return out;
    },
  };
}
