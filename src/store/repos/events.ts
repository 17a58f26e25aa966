import type { Kysely } from 'kysely';
import type { EventsRepo } from '../../core/storage/events.ts';
import type { Database } from '../schema.ts';

export function createEventsRepo(db: Kysely<Database>): EventsRepo {
  return {
    async insertMany(rows) {
      if (rows.length === 0) return;
      await db
        .insertInto('notify_events')
        .values(rows.map((r) => ({ ...r, metadata: JSON.stringify(r.metadata ?? {}) })))
        .execute();
    },
  };
}
