import type pg from 'pg';
import { preparedForms } from '../fixed-statement.ts';

/** a statement name per text, the same on every connection (pg parses a name once per connection) */
const names = new Map<string, string>();
const nameOf = (text: string) => {
  let name = names.get(text);
  if (name === undefined) names.set(text, (name = `notify_fixed_${names.size + 1}`));
  return name;
};

/**
 * Runs the fixed statements (fixed-statement.ts) on this connection as named prepared statements.
 * Prepared, the backend parses a statement once per connection and may plan it once (planning a CTE
 * can take longer than running it). Statements whose best plan depends on how large the sends table is
 * now are left out on purpose (fixed-statement.ts planEachRun); the campaign's group commit is kept
 * prepared as a call of notify_send_group, whose own plan cannot scan the table (migration 022). Kysely passes every query as (text, values):
 * only the texts fixedStatement made are named, so the set of prepared statements per connection
 * stays small and bounded (an IN list whose text grows with its values would not be).
 */
export function prepareFixedStatements(client: pg.PoolClient): void {
  const query = client.query as (...args: unknown[]) => unknown;
  client.query = function (this: pg.PoolClient, ...args: unknown[]) {
    const [text, values] = args;
    if (typeof text === 'string' && Array.isArray(values) && args.length === 2 && preparedForms.has(text)) {
      return query.call(this, { name: nameOf(text), text, values });
    }
    return query.apply(this, args);
  } as typeof client.query;
}
