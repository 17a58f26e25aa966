import type { Kysely } from 'kysely';
import type { ListsRepo, Membership } from '../../core/storage/lists.ts';
import { atomically, type Outbox } from '../outbox.ts';
import type { Database } from '../schema.ts';
import { recordJoins } from './joins.ts';

/** memberships: joining (a join announced once committed), leaving, and what lists a person is on or left */
export function listMemberships(db: Kysely<Database>, outbox: Outbox): Pick<ListsRepo, 'setMembership' | 'leave' | 'leftBy' | 'membershipsOf'> {
  return {
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
      return rows.map((r) => ({ ...listFields(r), status: (r.status ?? null) as Membership['status'] }));
    },
  };
}

/** a list row's own fields as the domain reads them (`public` is 0/1 in both engines) */
export function listFields(r: { id: number | string | bigint; name: string; description: string | null; public: number | boolean }) {
  return { id: Number(r.id), name: r.name, description: r.description, public: Number(r.public) === 1 };
}
