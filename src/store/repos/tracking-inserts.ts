import type { Kysely } from 'kysely';
import { columnList, type StoreDialect } from '../dialect.ts';
import { fixedStatement } from '../fixed-statement.ts';
import type { Outbox } from '../outbox.ts';
import type { Database } from '../schema.ts';

export const EVENT_COLUMNS = columnList({ type: 'text', send_id: 'bigint', contact_id: 'bigint', campaign_id: 'bigint', link_index: 'integer', metadata: 'json', is_machine: 'smallint', machine_reason: 'text', created_at: 'bigint' });
export type EventRow = Record<string, unknown>;

const BATCH_ROW = fixedStatement('insert into notify_tracking_batches (id, events, created_at) values (?, ?, ?)');

/**
 * Writes a tracking batch's event rows and its batch row. The event rows go in contact order
 * (stable: a person's events keep their order): the contact index takes the batch as one ordered
 * pass instead of a jump to another page for each row. Measured on SQLite (20,000 sends, 150,000
 * stored events, a loaded machine): 24.2 -> 22.8 us of CPU per row. With an endpoint that takes
 * opens or clicks, the outbox rows naming the inserted events go with them (GroupWrites.eventInserter).
 */
export function eventInserts(dialect: StoreDialect, outbox: Outbox) {
  const insert = dialect.eventInserter(EVENT_COLUMNS, 'contact_id');
  return {
    events: (trx: Kysely<Database>, rows: EventRow[], at: number): Promise<void> => insert(trx, rows, outbox, at),
    /** the batch's id, stored once: a retry of a batch that committed fails on it */
    async batchRow(trx: Kysely<Database>, id: string, events: number, at: number): Promise<void> {
      await BATCH_ROW(trx, [id, events, at]);
    },
  };
}
