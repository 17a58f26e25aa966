import type { Kysely } from 'kysely';
import { columnList, type StoreDialect } from '../dialect.ts';
import { fixedStatement, withParameters } from '../fixed-statement.ts';
import type { Outbox } from '../outbox.ts';
import type { Database } from '../schema.ts';

export const EVENT_COLUMNS = columnList({ type: 'text', send_id: 'bigint', contact_id: 'bigint', campaign_id: 'bigint', link_index: 'integer', metadata: 'json', is_machine: 'smallint', machine_reason: 'text', created_at: 'bigint' });
export type EventRow = Record<string, unknown>;

const NAMES = EVENT_COLUMNS.map((c) => c.name).join(', ');
const BATCH_ROW = fixedStatement('insert into notify_tracking_batches (id, events, created_at) values (?, ?, ?)');

/**
 * Writes a tracking batch's event rows and its batch row. The event rows go in contact order
 * (stable: a person's events keep their order): the contact index takes the batch as one ordered
 * pass instead of a jump to another page for each row. Measured on SQLite (20,000 sends, 150,000
 * stored events, a loaded machine): 24.2 -> 22.8 us of CPU per row.
 *
 * SQLite inserts row by row (insertRows, sorted here), then names the range for webhooksOut.
 * PostgreSQL runs one prepared statement: the rows as one array per column, sorted by the server
 * (no comparator calls on the pixel server's thread). With an endpoint that takes opens or clicks,
 * the same statement also writes the outbox rows naming the inserted ids (Outbox.insertTracked):
 * no open without its outgoing event, and no read of the largest event id while the sends are locked.
 */
export function eventInserts(dialect: StoreDialect, outbox: Outbox) {
  const source = dialect.rowSource(EVENT_COLUMNS);
  const sorted = `insert into notify_events (${NAMES}) ${source.text} order by contact_id, ${source.order}`;
  const insert = fixedStatement(sorted);
  return {
    async events(trx: Kysely<Database>, rows: EventRow[], at: number): Promise<void> {
      if (dialect.kind !== 'postgres') return insertRowByRow(trx, dialect, outbox, rows, at);
      if (rows.length === 0) return;
      if (outbox.tracking) await outbox.insertTracked(trx, withParameters(`${sorted} returning id`, source.parameters(rows)), at);
      else await insert(trx, source.parameters(rows));
    },
    /** the batch's id, stored once: a retry of a batch that committed fails on it */
    async batchRow(trx: Kysely<Database>, id: string, events: number, at: number): Promise<void> {
      await BATCH_ROW(trx, [id, events, at]);
    },
  };
}

async function insertRowByRow(trx: Kysely<Database>, dialect: StoreDialect, outbox: Outbox, rows: EventRow[], at: number): Promise<void> {
  rows.sort(byContact);
  const start = await outbox.trackingStart(trx);
  await dialect.insertRows(trx, 'notify_events', EVENT_COLUMNS, rows);
  if (start !== undefined) await outbox.writeTracking(trx, start, at);
}

const byContact = (a: EventRow, b: EventRow) => ((a.contact_id as number | null) ?? 0) - ((b.contact_id as number | null) ?? 0);
