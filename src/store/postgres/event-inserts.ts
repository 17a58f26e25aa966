import { fixedStatement, withParameters } from '../fixed-statement.ts';
import type { GroupWrites } from '../group-writes.ts';
import { columnArrayParameters, columnArraysText, ROW_ORDER } from './column-arrays.ts';

/** one prepared statement, the rows sorted by the server; through Outbox.insertTracked when an endpoint takes opens or clicks */
export const eventInserter: GroupWrites['eventInserter'] = (columns, by) => {
  const sorted = `insert into notify_events (${columns.map((c) => c.name).join(', ')}) ${columnArraysText(columns)} order by ${by}, ${ROW_ORDER}`;
  const insert = fixedStatement(sorted);
  return async (trx, rows, outbox, at) => {
    if (rows.length === 0) return;
    const parameters = columnArrayParameters(columns, rows);
    if (outbox.tracking) await outbox.insertTracked(trx, withParameters(`${sorted} returning id`, parameters), at);
    else await insert(trx, parameters);
  };
};
