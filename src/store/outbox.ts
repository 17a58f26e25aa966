import { randomBytes } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { EventSink, OutboundEvent, OutboundEventType } from '../core/storage/outbound.ts';
import { columnList, type StoreDialect } from './dialect.ts';
import type { Database } from './schema.ts';

/**
 * The writing side of the transactional outbox: a repository that causes an event hands it here
 * inside its own transaction (one row per event and endpoint that takes it: no cause without its
 * event, no event without its cause) and publishes it to in-process listeners only once that
 * transaction has committed.
 */
export interface Outbox {
  wants(type: OutboundEventType): boolean;
  /** the rows of these events, inside the caller's transaction */
  write(trx: Kysely<Database>, events: OutboundEvent[], now: number): Promise<void>;
  /** after the caller's commit */
  publish(events: OutboundEvent[]): void;
}

const ROWS_PER_INSERT = 1000;

const COLUMNS = columnList({ event_id: 'text', endpoint: 'text', type: 'text', body: 'text', status: 'text', attempts: 'integer', next_attempt_at: 'bigint', created_at: 'bigint', updated_at: 'bigint' });

/** The id receivers dedupe on: random, so two processes never make the same one. */
export const newEventId = () => `evt_${randomBytes(16).toString('base64url')}`;

export function createOutbox(sink: EventSink | undefined, dialect: Pick<StoreDialect, 'jsonRows'>): Outbox {
  if (!sink) return { wants: () => false, write: async () => {}, publish: () => {} };
  return {
    wants: (type) => sink.wants(type),
    async write(trx, events, now) {
      const rows = events.flatMap((event) => {
        const endpoints = sink.endpointsFor(event.type);
        if (endpoints.length === 0) return [];
        const id = newEventId();
        const body = JSON.stringify({ id, type: event.type, created_at: new Date(now).toISOString(), data: event.data });
        return endpoints.map((endpoint) => ({ event_id: id, endpoint, type: event.type, body, status: 'pending', attempts: 0, next_attempt_at: now, created_at: now, updated_at: now }));
      });
      // One JSON parameter a statement, as the tracking batch's events: a tracking flush writes up to
      // a thousand of these, and a multi-row INSERT of that many bind parameters costs more to build
      // and prepare on the pixel server's own thread than to run.
      const names = sql.raw(COLUMNS.map((c) => c.name).join(', '));
      for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
        await sql`insert into notify_outbound_events (${names}) ${dialect.jsonRows(JSON.stringify(rows.slice(i, i + ROWS_PER_INSERT)), COLUMNS)}`.execute(trx);
      }
    },
    publish(events) {
      if (events.length > 0) sink.publish(events);
    },
  };
}

/**
 * Runs `fn` in the caller's transaction when `db` is one, else in a new one: a write and the events
 * it causes commit together either way.
 */
export function atomically<T>(db: Kysely<Database>, fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db) : db.transaction().execute(fn);
}

/** The outbox of repositories bound to one Store.transaction: what they publish waits for its commit. */
export function deferredOutbox(outbox: Outbox): { outbox: Outbox; committed(): void } {
  const held: OutboundEvent[] = [];
  return {
    outbox: { wants: outbox.wants, write: outbox.write, publish: (events) => void held.push(...events) },
    committed: () => outbox.publish(held),
  };
}
