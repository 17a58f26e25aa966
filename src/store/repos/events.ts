import type { Insertable, Kysely } from 'kysely';
import type { Database, EventsTable } from '../schema.ts';

export type EventRow = Omit<Insertable<EventsTable>, 'metadata' | 'id'> & { metadata?: Record<string, unknown> };

export interface EventsRepo {
  /** one multi-row INSERT */
  insertMany(rows: EventRow[]): Promise<void>;
}

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
