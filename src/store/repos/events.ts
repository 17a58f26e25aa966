import type { Kysely } from 'kysely';
import type { EventsRepo } from '../../core/storage/events.ts';
import type { StoreDialect } from '../dialect.ts';
import { atomically } from '../outbox.ts';
import type { Database } from '../schema.ts';

export function createEventsRepo(db: Kysely<Database>, dialect: Pick<StoreDialect, 'kind'>): EventsRepo {
  return {
    async insertMany(rows) {
      if (rows.length === 0) return;
      // the check and the insert in one transaction (the caller's, usually), or the lock is gone before the insert
      await atomically(db, async (trx) => {
        const stored = await ofLivingContacts(trx, dialect, rows);
        if (stored.length === 0) return;
        await trx
          .insertInto('notify_events')
          .values(stored.map((r) => ({ ...r, metadata: JSON.stringify(r.metadata ?? {}) })))
          .execute();
      });
    },
  };
}

/**
 * Without the rows of a person erased meanwhile (an unsubscribe or a provider's report that came
 * in while the person was erased): nothing new names them. On PostgreSQL the contacts are locked
 * (KEY SHARE, as a foreign key's check would) until the caller commits, so an erasure that starts
 * meanwhile waits for these rows and anonymises them with the others (repos/contacts.ts).
 */
async function ofLivingContacts<R extends { contact_id: number | null }>(db: Kysely<Database>, dialect: Pick<StoreDialect, 'kind'>, rows: R[]): Promise<R[]> {
  const ids = [...new Set(rows.flatMap((r) => (r.contact_id === null ? [] : [r.contact_id])))];
  if (ids.length === 0) return rows;
  const q = db.selectFrom('notify_contacts').select('id').where('id', 'in', ids);
  const living = new Set((await (dialect.kind === 'postgres' ? q.forKeyShare() : q).execute()).map((r) => Number(r.id)));
  return rows.filter((r) => r.contact_id === null || living.has(r.contact_id));
}
