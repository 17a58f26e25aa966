import { CompiledQuery, type Kysely, type QueryResult, type RawBuilder, sql } from 'kysely';
import type { Database } from './schema.ts';

/**
 * A statement whose text never changes, run with new parameters: no query builder, no compile.
 * For the few statements the send loop runs once per group commit, building and compiling the
 * query through Kysely cost more CPU than SQLite takes to run it. The text is written with `?`
 * placeholders (it must hold no other `?`); on an engine that numbers them (PostgreSQL's `$1`)
 * it is rewritten once per engine the statement meets.
 */
export type FixedStatement = <R>(db: Kysely<Database>, parameters: readonly unknown[]) => Promise<QueryResult<R>>;

/**
 * The numbered-placeholder forms fixedStatement has made: few, each run once per group commit, so
 * a driver may keep them parsed and planned per connection (PostgreSQL: named prepared statements).
 */
export const preparedForms = new Set<string>();

/**
 * Texts planned on every run, never kept as a prepared statement: those whose best plan depends on
 * how large a table is now. PostgreSQL keeps a prepared statement's generic plan once it has found
 * it no dearer than the plans for actual parameters (from the sixth run): the send loop's group
 * commits found it while their campaign's first sends were all the table had, so the plan kept was a
 * scan of the whole table, and with nothing to invalidate it (no ANALYZE while autovacuum is off)
 * every group of a 100,000-send run read every send row (bench scale: 855 -> 134 msg/s). Parsing
 * such a text again costs the backend about 16 us per group; planning it was paid on every run
 * already (its plans for actual parameters were the cheaper ones once the table had grown).
 */
const plannedEachRun = new Set<string>();
export function planEachRun(text: string): string {
  plannedEachRun.add(text);
  return text;
}

/**
 * `prepare` false: never a prepared statement, whatever planEachRun says (a text made per run, as a
 * segment campaign's group commit is: kept prepared, each would stay on every connection).
 */
export function fixedStatement(text: string, prepare = true): FixedStatement {
  /** the text in each engine's placeholder form, by its query adapter (shared by a database and its transactions) */
  const forms = new WeakMap<object, string>();
  const formFor = (db: Kysely<Database>) => {
    const adapter = db.getExecutor().adapter;
    let form = forms.get(adapter);
    if (form === undefined) {
      let n = 0;
      if (sql`${0}`.compile(db).sql === '?') form = text;
      else {
        form = text.replace(/\?/g, () => `$${++n}`);
        if (prepare && !plannedEachRun.has(text)) preparedForms.add(form);
      }
      forms.set(adapter, form);
    }
    return form;
  };
  return <R>(db: Kysely<Database>, parameters: readonly unknown[]) => db.executeQuery<R>(CompiledQuery.raw(formFor(db), [...parameters]));
}

/** A `?` text and its parameters as a query part, for a statement built around it (a WITH). */
export function withParameters(text: string, parameters: readonly unknown[]): RawBuilder<unknown> {
  const parts = text.split('?');
  if (parts.length !== parameters.length + 1) throw new Error(`${parts.length - 1} placeholders for ${parameters.length} parameters`);
  return sql.join(
    parts.map((part, i) => (i < parameters.length ? sql`${sql.raw(part)}${parameters[i]}` : sql.raw(part))),
    sql``,
  );
}
