import type { StoreDialect } from '../dialect.ts';
import type { GroupWrites } from '../group-writes.ts';

/** the rows sorted here, inserted by insertRows, then the range since trackingStart named for the outbox */
export const eventInserter =
  (insertRows: StoreDialect['insertRows']): GroupWrites['eventInserter'] =>
  (columns, by) => {
    const byColumn = (a: Record<string, unknown>, b: Record<string, unknown>) => ((a[by] as number | null) ?? 0) - ((b[by] as number | null) ?? 0);
    return async (trx, rows, outbox, at) => {
      rows.sort(byColumn);
      const start = await outbox.trackingStart(trx);
      await insertRows(trx, 'notify_events', columns, rows);
      if (start !== undefined) await outbox.writeTracking(trx, start, at);
    };
  };
