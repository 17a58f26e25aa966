import { fixedStatement, withParameters } from '../fixed-statement.ts';
import type { GroupWrites } from '../group-writes.ts';
import { columnArrayParameters, columnArraysText, emptyJsonColumns, emptyKey, ROW_ORDER } from './column-arrays.ts';

/**
 * one prepared statement per set of columns sent empty (column-arrays.ts: a click's metadata is
 * empty without trackIpAddress), the rows sorted by the server; through Outbox.insertTracked when
 * an endpoint takes opens or clicks
 */
export const eventInserter: GroupWrites['eventInserter'] = (columns, by) => {
  const names = columns.map((c) => c.name).join(', ');
  const forms = new Map<string, { sorted: string; insert: ReturnType<typeof fixedStatement> }>();
  return async (trx, rows, outbox, at) => {
    if (rows.length === 0) return;
    const empty = emptyJsonColumns(columns, rows);
    const key = emptyKey(empty);
    let form = forms.get(key);
    if (!form) {
      const sorted = `insert into notify_events (${names}) ${columnArraysText(columns, empty)} order by ${by}, ${ROW_ORDER}`;
      forms.set(key, (form = { sorted, insert: fixedStatement(sorted) }));
    }
    const parameters = columnArrayParameters(columns, rows, empty);
    if (outbox.tracking) await outbox.insertTracked(trx, withParameters(`${form.sorted} returning id`, parameters), at);
    else await form.insert(trx, parameters);
  };
};
