import type { Kysely } from 'kysely';
import type { EventRow, EventsRepo } from '../../core/storage/events.ts';
import type { StoreDialect } from '../dialect.ts';
import { atomically } from '../outbox.ts';
import type { Database } from '../schema.ts';

export function createEventsRepo(db: Kysely<Database>, dialect: Pick<StoreDialect, 'lockForKeyShare'>): EventsRepo {
  return {
    async insertMany(rows) {
      if (rows.length === 0) return;
      // the check and the insert in one transaction (the caller's, usually), or the lock is gone before the insert
      await atomically(db, async (trx) => {
        const { rows: named, fromSend } = await withSendsPeople(trx, rows);
        const stored = await ofLivingContacts(trx, dialect, named, fromSend);
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
 * An event that names a send names its person too (a provider's report found by message id whose
 * address is no contact's): a person's events are found by contact alone (repos/person-data.ts).
 * A send of someone erased names nobody, so their events stay anonymous.
 */
async function withSendsPeople<R extends EventRow>(db: Kysely<Database>, rows: R[]): Promise<{ rows: R[]; fromSend: Set<R> }> {
  const fromSend = new Set<R>();
  const ids = [...new Set(rows.flatMap((r) => (r.contact_id === null && r.send_id !== null ? [r.send_id] : [])))];
  if (ids.length === 0) return { rows, fromSend };
  const sends = await db.selectFrom('notify_sends').select(['id', 'contact_id']).where('id', 'in', ids).execute();
  const people = new Map(sends.flatMap((s) => (s.contact_id === null ? [] : [[Number(s.id), Number(s.contact_id)] as const])));
  const named = rows.map((r) => {
    const person = r.contact_id === null && r.send_id !== null ? people.get(r.send_id) : undefined;
    if (person === undefined) return r;
    const row = { ...r, contact_id: person };
    fromSend.add(row);
    return row;
  });
  return { rows: named, fromSend };
}

/**
 * Without the rows of a person erased meanwhile (an unsubscribe or a provider's report that came
 * in while the person was erased): nothing new names them. A row that named only the send stays,
 * naming no one, as it was written before its person was filled in. On PostgreSQL the contacts are locked
 * (KEY SHARE, as a foreign key's check would) until the caller commits, so an erasure that starts
 * meanwhile waits for these rows and anonymises them with the others (repos/contacts.ts).
 */
async function ofLivingContacts<R extends EventRow>(db: Kysely<Database>, dialect: Pick<StoreDialect, 'lockForKeyShare'>, rows: R[], fromSend: Set<R>): Promise<R[]> {
  const ids = [...new Set(rows.flatMap((r) => (r.contact_id === null ? [] : [r.contact_id])))];
  if (ids.length === 0) return rows;
  const q = db.selectFrom('notify_contacts').select('id').where('id', 'in', ids);
  const living = new Set((await dialect.lockForKeyShare(q).execute()).map((r) => Number(r.id)));
  return rows.flatMap((r) => (r.contact_id === null || living.has(r.contact_id) ? [r] : fromSend.has(r) ? [{ ...r, contact_id: null }] : []));
}
