import type { Kysely } from 'kysely';
import type { ListsRepo } from '../../core/storage/lists.ts';
import type { StoreDialect } from '../dialect.ts';
import { toDate } from '../rows.ts';
import type { Outbox } from '../outbox.ts';
import type { Database } from '../schema.ts';
import { findListNamed } from './contact-writes.ts';
import { listFields, listMemberships } from './list-members.ts';

/** Lists themselves; who is on which (and left which) in list-members.ts. */
export function createListsRepo(db: Kysely<Database>, dialect: StoreDialect, outbox: Outbox): ListsRepo {
  const byName = async (trx: Kysely<Database>, name: string) => {
    const row = await findListNamed(trx, dialect, name);
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
    ...listMemberships(db, outbox),
  };
}
