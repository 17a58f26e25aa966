import { type Kysely, sql } from 'kysely';
import type { ListsRepo, Membership } from '../../core/storage/lists.ts';
import type { StoreDialect } from '../dialect.ts';
import { toDate } from '../rows.ts';
import { atomically, type Outbox } from '../outbox.ts';
import type { Database } from '../schema.ts';
import { recordJoins } from './joins.ts';

export function createListsRepo(db: Kysely<Database>, dialect: StoreDialect, outbox: Outbox): ListsRepo {
  const byName = async (trx: Kysely<Database>, name: string) => {
    const row = await trx
      .selectFrom('notify_lists')
      .select(['id', 'name', 'public'])
      .where(dialect.lower(sql.ref('name')), '=', name.toLowerCase())
      .orderBy(sql`case when name = ${name} then 0 else 1 end`)
      .orderBy('id')
      .executeTakeFirst();
    return row && { id: Number(row.id), name: row.name, public: Number(row.public) === 1 };
  };
  return {
    async create(input, now) {
      return dialect.writeTransaction(db, async (trx) => {
        await dialect.lockTable(trx, 'notify_lists');
        if (await byName(trx, input.name)) return undefined;
        const row = await trx
          .insertInto('notify_lists')
          .values({ name: input.name, description: input.description, public: input.public ? 1 : 0, created_at: now })
          .returning(['id', 'created_at'])
          .executeTakeFirstOrThrow();
        return { id: Number(row.id), name: input.name, description: input.description, public: input.public, subscribers: 0, created_at: toDate(row.created_at)! };
      });
    },
    async all() {
      const rows = await db
        .selectFrom('notify_lists as l')
        .select(['l.id', 'l.name', 'l.description', 'l.public', 'l.created_at'])
        .select((eb) =>
          eb
            .selectFrom('notify_list_members as m')
            .select(eb.fn.countAll<number>().as('n'))
            .whereRef('m.list_id', '=', 'l.id')
            .where('m.status', '=', 'subscribed')
            .as('subscribers'),
        )
        .orderBy('l.name')
        .execute();
      return rows.map((r) => ({
        ...listFields(r),
        subscribers: Number(r.subscribers ?? 0),
        created_at: toDate(r.created_at)!,
      }));
    },
    byName: (name) => byName(db, name),
    async campaignsUsing(listId) {
      const row = await db.selectFrom('notify_campaigns').select((eb) => eb.fn.countAll<number>().as('n')).where('list_id', '=', listId).executeTakeFirst();
      return Number(row?.n ?? 0);
    },
    async delete(listId) {
      await db.deleteFrom('notify_lists').where('id', '=', listId).execute();
    },
    async setMembership(listId, contactId, status, now) {
      const events = await atomically(db, async (trx) => {
        const before = await trx.selectFrom('notify_list_members').select('status').where('list_id', '=', listId).where('contact_id', '=', contactId).executeTakeFirst();
        await trx
          .insertInto('notify_list_members')
          .values({ list_id: listId, contact_id: contactId, created_at: now, status, unsubscribed_at: status === 'unsubscribed' ? now : null })
          .onConflict((oc) =>
            oc.columns(['list_id', 'contact_id']).doUpdateSet({
              status,
              unsubscribed_at: status === 'unsubscribed' ? now : null,
              // rejoining counts from now
              ...(status === 'subscribed' ? { created_at: now } : {}),
            }),
          )
          .execute();
        const joined = status === 'subscribed' && before?.status !== 'subscribed';
        return joined ? recordJoins(trx, outbox, [{ contactId, listId }], now) : [];
      });
      outbox.publish(events);
    },
    async leave(listId, contactId, now) {
      const res = await db
        .updateTable('notify_list_members')
        .set({ status: 'unsubscribed', unsubscribed_at: now })
        .where('list_id', '=', listId)
        .where('contact_id', '=', contactId)
        .where('status', '=', 'subscribed')
        .executeTakeFirst();
      return Number(res.numUpdatedRows) > 0;
    },
    async leftBy(contactIds) {
      const out = new Map<number, string[]>();
      if (contactIds.length === 0) return out;
      const rows = await db
        .selectFrom('notify_list_members as m')
        .innerJoin('notify_lists as l', 'l.id', 'm.list_id')
        .select(['m.contact_id', 'l.name'])
        .where('m.contact_id', 'in', [...new Set(contactIds)])
        .where('m.status', '=', 'unsubscribed')
        .execute();
      for (const r of rows) out.set(Number(r.contact_id), [...(out.get(Number(r.contact_id)) ?? []), r.name]);
      return out;
    },
    async membershipsOf(contactId) {
      const rows = await db
        .selectFrom('notify_lists as l')
        .leftJoin('notify_list_members as m', (j) => j.onRef('m.list_id', '=', 'l.id').on('m.contact_id', '=', contactId))
        .select(['l.id', 'l.name', 'l.description', 'l.public', 'm.status'])
        .where((eb) => eb.or([eb('m.contact_id', 'is not', null), eb('l.public', '=', 1)]))
        .orderBy('l.name')
        .orderBy('l.id')
        .execute();
      return rows.map((r) => ({
        ...listFields(r),
        status: (r.status ?? null) as Membership['status'],
      }));
    },
  };
}

/** a list row's own fields as the domain reads them (`public` is 0/1 in both engines) */
function listFields(r: { id: number | string | bigint; name: string; description: string | null; public: number | boolean }) {
  return { id: Number(r.id), name: r.name, description: r.description, public: Number(r.public) === 1 };
}
