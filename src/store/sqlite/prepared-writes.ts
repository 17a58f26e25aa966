import type BetterSqlite3 from 'better-sqlite3';
import type { FixedRun, StoreDialect } from '../dialect.ts';

// The dialect's bulk writes on better-sqlite3's own connection: statements prepared once, run per
// row, synchronously (nothing else of the process runs in between).

/** rows per multi-row INSERT of rowInserter */
const ROWS_PER_STATEMENT = 64;

/**
 * Many rows into one table: a multi-row INSERT of ROWS_PER_STATEMENT rows with positional
 * parameters, prepared once per table and column list and run per full group, then a one-row
 * INSERT for the rest (both texts fixed, so nothing is prepared per batch). Cheaper per row than
 * the JSON form (the INSERT ... SELECT from json_each re-reads the row's JSON text once per
 * column), than a one-row statement run per row (a statement execution and a crossing into C per
 * row), and than named parameters (a property read per parameter in the binding). It runs on the
 * connection under Kysely, which is the one the caller's transaction holds: better-sqlite3 is
 * synchronous, so nothing else runs in between.
 */
export function rowInserter(sqlite: BetterSqlite3.Database): StoreDialect['insertRows'] {
  const statements = new Map<string, { many: BetterSqlite3.Statement; one: BetterSqlite3.Statement }>();
  return async (_trx, table, columns, rows) => {
    const names = columns.map((c) => c.name);
    const key = `${table}(${names.join(',')})`;
    let prepared = statements.get(key);
    if (!prepared) {
      const head = `insert into "${table}" (${names.map((n) => `"${n}"`).join(', ')}) values `;
      const tuple = `(${names.map(() => '?').join(', ')})`;
      prepared = { many: sqlite.prepare(head + Array(ROWS_PER_STATEMENT).fill(tuple).join(', ')), one: sqlite.prepare(head + tuple) };
      statements.set(key, prepared);
    }
    const width = names.length;
    const group: unknown[] = new Array(ROWS_PER_STATEMENT * width);
    const single: unknown[] = new Array(width);
    let i = 0;
    for (; i + ROWS_PER_STATEMENT <= rows.length; i += ROWS_PER_STATEMENT) {
      for (let r = 0; r < ROWS_PER_STATEMENT; r++) fill(group, r * width, rows[i + r], names);
      prepared.many.run(group);
    }
    for (; i < rows.length; i++) {
      fill(single, 0, rows[i], names);
      prepared.one.run(single);
    }
  };
}

/** a column the row lacks (or holds undefined) is NULL, as the JSON form makes it */
function fill(into: unknown[], at: number, row: Record<string, unknown>, names: readonly string[]): void {
  for (let c = 0; c < names.length; c++) into[at + c] = row[names[c]] ?? null;
}

/**
 * Rows by a unique key, rows as arrays (better-sqlite3's raw mode): under a write transaction
 * nothing else can change them. One prepared SELECT for the whole list, its keys as one JSON
 * parameter that SQLite probes the key's index with (`in (select value from json_each(?))`): a
 * tracking batch's thousand tokens cost one crossing into SQLite instead of one per token. The lookups
 * alone (1,500 of 2,000 sends' tokens, loaded machine): 7.7 -> 3.3 us of CPU per token against one
 * prepared `where key = ?` run per key, which was itself cheaper than an IN list of bound values compiled
 * through the query builder (8-10 us). Inside whole batches of opens, interleaved on a machine at load 30,
 * both forms took 4-5 us per token (why is open: a 64 MB page cache did not change it).
 */
export function keyedReader(sqlite: BetterSqlite3.Database): StoreDialect['lockRowsByKey'] {
  const statements = new Map<string, BetterSqlite3.Statement>();
  return async (_trx, table, key, columns, keys) => {
    if (keys.length === 0) return [];
    const text = `select ${columns.map((c) => `"${c}"`).join(', ')} from "${table}" where "${key}" in (select value from json_each(?))`;
    let statement = statements.get(text);
    if (!statement) {
      statement = sqlite.prepare(text).raw(true);
      statements.set(text, statement);
    }
    return statement.all(JSON.stringify(keys)) as unknown[][];
  };
}

/**
 * Many rows updated by key: one UPDATE prepared once per table, key, columns and guard, run per
 * row with named parameters, on the connection the caller's transaction holds (as rowInserter).
 */
export function rowUpdater(sqlite: BetterSqlite3.Database): StoreDialect['updateRows'] {
  const statements = new Map<string, BetterSqlite3.Statement>();
  return async (_trx, table, key, columns, rows, guard) => {
    const names = columns.map((c) => c.name);
    const cacheKey = `${table}(${key.name}:${names.join(',')}|${guard.column})`;
    let statement = statements.get(cacheKey);
    if (!statement) {
      const set = names.map((n) => `"${n}" = @${n}`).join(', ');
      statement = sqlite.prepare(`update "${table}" set ${set} where "${key.name}" = @${key.name} and "${guard.column}" = @guard__`);
      statements.set(cacheKey, statement);
    }
    const params: Record<string, unknown> = { guard__: guard.value };
    const runAll = () => {
      let changed = 0;
      for (const row of rows) {
        params[key.name] = row[key.name];
        for (const name of names) params[name] = row[name] ?? null;
        changed += statement.run(params).changes;
      }
      return changed;
    };
    // outside a transaction the rows still change together, as one statement would change them
    return sqlite.inTransaction ? runAll() : sqlite.transaction(runAll)();
  };
}

/**
 * Fixed statements in one transaction, run synchronously: Kysely's connection lock keeps every
 * other query of the process (and any transaction of its) out meanwhile, and BEGIN IMMEDIATE takes
 * the write lock first, as writeTransaction does. Measured on the send loop's group commit (a
 * loaded machine): 51 -> 24 us of CPU per message against the same statements through a Kysely
 * transaction.
 */
export function fixedWriter(sqlite: BetterSqlite3.Database, size = 100): StoreDialect['writeFixed'] {
  const statements = new Map<string, BetterSqlite3.Statement>();
  const prepared = (text: string) => {
    let statement = statements.get(text);
    if (!statement) {
      statement = sqlite.prepare(text);
      statements.set(text, statement);
      // bounded: a segment campaign's texts are made per run (the oldest prepared goes; prepared again if used)
      if (statements.size > size) statements.delete(statements.keys().next().value!);
    }
    return statement;
  };
  const runAll = sqlite.transaction((list: readonly FixedRun[]) =>
    list.map((s) => {
      const statement = prepared(s.text);
      if (statement.reader) return statement.all(...s.parameters);
      statement.run(...s.parameters);
      return [];
    }),
  );
  return (db, list) => db.connection().execute(async () => runAll.immediate(list));
}
